"""Compares raw float32 [T, vocab] logit files: max |a - b| <= tolerance and the same argmax.

usage: compare_logits.py A B TOLERANCE T
Prints "max |diff| <= TOLERANCE over T positions, argmax equal" or exits 1 with the reason.
"""
import struct
import sys


def load(path, rows):
    data = open(path, "rb").read()
    values = struct.unpack("<%df" % (len(data) // 4), data)
    if len(values) % rows:
        sys.exit("%s: %d floats is not %d rows" % (path, len(values), rows))
    width = len(values) // rows
    return [values[r * width:(r + 1) * width] for r in range(rows)]


def main():
    a_path, b_path, tolerance, rows = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    a, b = load(a_path, rows), load(b_path, rows)
    worst = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
    if worst > tolerance:
        sys.exit("max |diff| %g > %g" % (worst, tolerance))
    for t, (ra, rb) in enumerate(zip(a, b)):
        if max(range(len(ra)), key=ra.__getitem__) != max(range(len(rb)), key=rb.__getitem__):
            sys.exit("argmax differs at position %d" % t)
    print("max |diff| <= %g over %d positions, argmax equal" % (tolerance, rows))


if __name__ == "__main__":
    main()
