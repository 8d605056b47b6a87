inventory = {"apple": 3, "pear": 0, "plum": 5}

def restock(stock, item, qty):
    stock[item] = stock.get(item, 0) + qty
    return stock[item]

empty = [k for k, v in inventory.items() if v == 0]
for item in empty:
    restock(inventory, item, 4)
restock(inventory, "kiwi", 2)
print(sorted(inventory.items()))
