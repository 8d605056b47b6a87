def reverse_words(sentence):
    words = sentence.split(" ")
    words.reverse()
    return " ".join(words)

def shout(s):
    return s.upper() + "!"

line = "debug me now"
out = shout(reverse_words(line))
print(out)
