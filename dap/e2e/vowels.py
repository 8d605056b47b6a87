def f(text, n):
    out = []
    for ch in text:
        if ch in 'aeiou':
            out.append(ch.upper())
        else:
            out.append(ch)
    return ''.join(out[:n])


if __name__ == "__main__":
    print(f("banana", 4))
