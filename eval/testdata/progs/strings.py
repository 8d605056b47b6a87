def shout(text):
    words = text.split()
    out = []
    for w in words:
        if len(w) > 2:
            out.append(w.upper())
        else:
            out.append(w)
    return " ".join(out)


def count(text, ch):
    n = 0
    i = 0
    while i < len(text):
        if text[i] == ch:
            n += 1
        i += 1
    return n


s = shout("a big red fox")
c = count(s, "O")
