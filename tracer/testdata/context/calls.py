import os


def where():
    return os.path.basename(__file__), os.getcwd() == os.path.dirname(__file__)
