class InsufficientFunds(Exception):
    pass

class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds(amount)
        self.balance -= amount
        return self.balance

acct = Account("ada", 50)
acct.withdraw(20)
try:
    acct.withdraw(100)
except InsufficientFunds as e:
    print("refused", e)
