"""python3 -m omkl plot DIR [--out STEM] [--format png svg]: a study's plots."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m omkl", description="omkl's Python tools")
    commands = parser.add_subparsers(dest="command", required=True)
    plot = commands.add_parser("plot", help="draw a study's learning curves (and regret curves) from its --out folder")
    plot.add_argument("dir", help="the study's output folder (summary.json, curves.csv)")
    plot.add_argument("--out", help="a folder or a path stem for the files (default: DIR)")
    plot.add_argument("--format", nargs="+", default=["png", "svg"], choices=["png", "svg", "pdf"])
    args = parser.parse_args(argv)
    from . import Error, plot as draw

    try:
        written = draw(args.dir, out=args.out, formats=tuple(args.format))
    except (Error, ImportError) as error:
        print(f"python3 -m omkl plot: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
