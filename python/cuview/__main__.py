"""python3 -m cuview: a small command line over the package.

  python3 -m cuview status NAME [--json] [--remote URL]   what the publisher NAME does now
  python3 -m cuview list [--remote URL]                   the publishers running (here, or behind a gateway)
  python3 -m cuview version                                the package's and libcuview.so's versions
"""
import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m cuview", description="Inspect running cuview publishers.")
    sub = parser.add_subparsers(dest="command", required=True)
    status = sub.add_parser("status", help="what the publisher NAME does now")
    status.add_argument("name")
    status.add_argument("--json", action="store_true", help="the stats as JSON (docs/protocol.md)")
    status.add_argument("--remote", help="the cuview-gateway to go through (docs/remote.md)")
    listing = sub.add_parser("list", help="the publishers running")
    listing.add_argument("--remote", help="the cuview-gateway to ask (docs/remote.md)")
    sub.add_parser("version", help="the package's and libcuview.so's versions")
    args = parser.parse_args(argv)
    try:
        import cuview  # here, so that a missing libcuview.so is reported as below
    except ImportError as e:
        print(f"python3 -m cuview: {e}", file=sys.stderr)
        return 1
    try:
        if args.command == "version":
            print(f"cuview {cuview.version()} ({cuview._capi.lib._name})")
        elif args.command == "list":
            for p in cuview.list(remote=args.remote):
                print(p["name"])
        else:
            with cuview.attach(args.name, client="python3 -m cuview", control_only=True, remote=args.remote) as c:
                parts = c.statuses() if isinstance(c, cuview.Group) else [c.status()]
            if args.json:
                print(json.dumps(parts if len(parts) > 1 else parts[0], indent=2))
            for k, s in enumerate(parts if not args.json else []):
                part = f"part {k} " if len(parts) > 1 else ""
                state = "paused" if s.get("paused") else "running"
                # Every axis, fastest first as --size takes it: 40x30x16 for a volume.
                grid = "x".join(str(n) for n in reversed(s["dims"]))
                print(f"{args.name}: {part}{s.get('sim')} {grid} on {s.get('backend')}, "
                      f"{state}, step {s.get('step')}, {s.get('steps_per_second', 0):.1f} steps/s, "
                      f"{s.get('clients', 0)} client(s)")
    except cuview.CuviewError as e:
        print(f"python3 -m cuview {args.command}: {e} [{e.code}]", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
