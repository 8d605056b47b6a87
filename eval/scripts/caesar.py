def shift_char(ch, k):
    if not ch.isalpha():
        return ch
    base = ord("a")
    return chr((ord(ch) - base + k) % 26 + base)

def caesar(text, k):
    return "".join(shift_char(c, k) for c in text)

secret = caesar("hi you", 3)
print(secret)
