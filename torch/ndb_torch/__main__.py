"""Entry point: python3 -m ndb_torch {train,logits} ..."""
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python3 -m ndb_torch {train,logits} [options]  (see --help of each)")
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "train":
        from . import train
        return train.main(rest)
    if cmd == "logits":
        from . import tools
        return tools.logits_main(rest)
    print("ndb_torch: unknown command %r (want train or logits)" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
