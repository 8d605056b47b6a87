import os
uid = os.getuid()
print("uid", uid)
