"""Reads a valgrind memcheck XML report (argv[1]) of a Python process running qsimd and fails
on what is ours: any error with a frame in the qsimd extension (definitely lost blocks
included), and any invalid read / write / free anywhere but the dynamic loader (whose
optimised string functions valgrind misjudges). Python's and NumPy's one-time allocations
at start-up are reported as ignored."""
import sys
import xml.etree.ElementTree as ET

BAD_ANYWHERE = {"InvalidRead", "InvalidWrite", "InvalidFree", "MismatchedFree", "Overlap",
                "InvalidJump", "InvalidMemPool"}


def frames(err):
    for stack in err.findall("stack"):
        for f in stack.findall("frame"):
            yield f.findtext("fn") or "?", f.findtext("obj") or "", f.findtext("file") or ""


def main(path):
    root = ET.parse(path).getroot()
    bad, ignored = [], {}
    for err in root.iter("error"):
        kind = err.findtext("kind")
        fr = list(frames(err))
        ours = any("qsimd" in obj and "_core" in obj for _, obj, _ in fr)
        in_loader = bool(fr) and "ld-linux" in fr[0][1]
        if ours or (kind in BAD_ANYWHERE and not in_loader):
            what = err.findtext("what") or err.findtext("xwhat/text") or ""
            stack = "\n      ".join(f"{fn} ({obj.rsplit('/', 1)[-1]}:{fl})" for fn, obj, fl in fr[:12])
            bad.append(f"{kind}: {what}\n      {stack}")
        else:
            ignored[kind] = ignored.get(kind, 0) + 1
    print(f"valgrind: {len(bad)} errors in qsimd or invalid accesses; ignored (Python / NumPy "
          f"start-up, loader): {ignored or 'none'}")
    for b in bad:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
