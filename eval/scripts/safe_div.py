def safe_div(a, b):
    try:
        result = a / b
    except ZeroDivisionError:
        result = None
    return result

pairs = [(6, 3), (1, 0), (9, 2)]
answers = []
for x, y in pairs:
    answers.append(safe_div(x, y))
print(answers)
