#!/usr/bin/env python3
"""The plot and the markdown table of a GPU benchmark run, from its bench.csv.

scripts/bench-nvidia.sh writes <out dir>/bench.csv on the GPU machine; this runs anywhere
(matplotlib is needed for the plot only, never on the GPU machine):

    scripts/plot-bench.py OUT/bench.csv                      # docs/bench-nvidia-bw.png
    scripts/plot-bench.py OUT/bench.csv --table              # the table on stdout
    scripts/plot-bench.py OUT/bench.csv --update docs/benchmarks-nvidia.md
        # the table between the <!-- bench-table:begin/end --> markers of that file, with the
        # date, the CSV's name and this command

The CSV's columns: operation,size_bytes,unit,ours,nvshmem,ratio,ours_status,nvshmem_status
(status: ok, wrong, unchecked or missing). Only checked numbers (status ok) are plotted; the
table shows WRONG for a failed check and – for a missing number, as bench-table.md does.
"""
import argparse
import csv
import datetime
import os
import re
import sys

BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"
COLUMNS = ["operation", "size_bytes", "unit", "ours", "nvshmem", "ratio", "ours_status", "nvshmem_status"]


def read_rows(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (r.fieldnames or [])]
        if missing:
            sys.exit(f"plot-bench: {path}: not a bench.csv of scripts/bench-nvidia.sh (no column {', '.join(missing)})")
        rows = list(r)
    if not rows:
        sys.exit(f"plot-bench: {path}: no rows")
    for row in rows:
        try:
            row["size"] = int(row["size_bytes"])
        except ValueError:
            sys.exit(f"plot-bench: {path}: size_bytes '{row['size_bytes']}' is not a number ({row['operation']})")
    return rows


def hsize(b):
    if b == 0:
        return "–"
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return f"{b >> 20} MiB"
    if b >= 1 << 10 and b % (1 << 10) == 0:
        return f"{b >> 10} KiB"
    return f"{b} B"


def cell(value, status):
    if status == "wrong":
        return "WRONG"
    if status == "missing" or value == "":
        return "–"
    if status == "unchecked":
        return "unchecked"
    v = float(value)
    return f"{v:.1f}" if v >= 100 else f"{v:.3g}"


def good(row, lib):
    return row[f"{lib}_status"] == "ok" and row[lib] != ""


def table(rows):
    out = [
        "| operation | size | unit | better | ours | NVSHMEM | ratio (ours/NVSHMEM) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        better = "higher" if r["unit"] == "GB/s" else "lower"
        ratio = f"{float(r['ratio']):.2f}×" if r["ratio"] and good(r, "ours") and good(r, "nvshmem") else "–"
        out.append(
            f"| {r['operation']} | {hsize(r['size'])} | {r['unit']} | {better} | "
            f"{cell(r['ours'], r['ours_status'])} | {cell(r['nvshmem'], r['nvshmem_status'])} | {ratio} |"
        )
    return "\n".join(out) + "\n"


def series(rows, op, lib, key="size"):
    """(x, y) of operation `op` for `lib`, checked numbers only, sorted by x."""
    pts = sorted((r[key], float(r[lib])) for r in rows if r["operation"] == op and good(r, lib))
    return [p[0] for p in pts], [p[1] for p in pts]


def cta_series(rows, prefix, size, lib):
    """Bandwidth against the CTA count: rows named <prefix>_<C>x1024 at `size`."""
    pat = re.compile(re.escape(prefix) + r"_(\d+)x1024$")
    pts = []
    for r in rows:
        m = pat.match(r["operation"])
        if m and r["size"] == size and good(r, lib):
            pts.append((int(m.group(1)), float(r[lib])))
    pts.sort()
    return [p[0] for p in pts], [p[1] for p in pts]


def plot(rows, png, title):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot-bench: the plot needs matplotlib (Debian: apt-get install python3-matplotlib; "
                 "or pip install matplotlib); --table and --update work without it")

    libs = [("ours", "this library", "-", "o"), ("nvshmem", "NVSHMEM", "--", "s")]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    plotted = 0

    ax = axes[0]
    for op, color in (("putmem_nbi_wg_32x1024", "tab:blue"), ("getmem_wg_32x1024", "tab:orange")):
        for lib, name, ls, mk in libs:
            x, y = series(rows, op, lib)
            if x:
                ax.plot(x, y, ls, marker=mk, color=color, label=f"{op.split('_')[0]}, {name}")
                plotted += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per call (32 CTAs x 1024 threads)")
    ax.set_ylabel("GB/s")
    ax.set_title("put / get bandwidth against size")

    ax = axes[1]
    colors = iter(["tab:blue", "tab:cyan", "tab:orange", "tab:red"])
    for prefix in ("putmem_nbi_wg", "getmem_wg"):
        for size in (32 << 20, 256 << 20):
            color = next(colors)
            for lib, name, ls, mk in libs:
                x, y = cta_series(rows, prefix, size, lib)
                if x:
                    ax.plot(x, y, ls, marker=mk, color=color, label=f"{prefix.split('_')[0]} {hsize(size)}, {name}")
                    plotted += 1
    ax.set_xscale("log", base=2)
    ax.set_xlabel("CTAs of 1024 threads")
    ax.set_ylabel("GB/s")
    ax.set_title("put / get bandwidth against CTAs")

    ax = axes[2]
    colors = {"float_sum_reduce": "tab:green", "broadcastmem": "tab:purple", "alltoallmem": "tab:brown",
              "fcollectmem": "tab:gray"}
    for coll, color in colors.items():
        for lib, name, ls, mk in libs:
            x, y = series(rows, f"{coll}_wg_1024thr_bw", lib)
            if x:
                ax.plot(x, y, ls, marker=mk, color=color, label=f"{coll}, {name}")
                plotted += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes (per PE for alltoall, fcollect); 1 CTA x 1024 threads")
    ax.set_ylabel("GB/s of dest per PE")
    ax.set_title("collectives bandwidth against size")

    from matplotlib.ticker import FuncFormatter, LogLocator

    for ax in (axes[0], axes[2]):
        ax.xaxis.set_major_locator(LogLocator(base=2, numticks=30))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: hsize(int(round(x))) if x >= 1 else ""))
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    ctas = sorted({int(m.group(1)) for r in rows for m in [re.search(r"_(\d+)x1024$", r["operation"])] if m})
    if ctas:
        axes[1].set_xticks(ctas)
    axes[1].xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{int(round(x))}"))
    axes[1].xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    if plotted == 0:
        sys.exit("plot-bench: no checked bandwidth rows in the CSV (nothing to plot)")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    fig.savefig(png, dpi=110)
    print(f"plot-bench: wrote {png} ({plotted} curves)", file=sys.stderr)


def update(doc, rows, csv_path, cmd):
    text = open(doc).read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit(f"plot-bench: {doc}: needs exactly one '{BEGIN}' followed by one '{END}'")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    today = datetime.date.today().isoformat()
    body = (f"\n_Generated on {today} from `{os.path.basename(csv_path)}` by `{cmd}`._\n\n" + table(rows) + "\n")
    with open(doc, "w") as f:
        f.write(head + BEGIN + body + END + tail)
    print(f"plot-bench: updated the table in {doc} ({len(rows)} rows)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="bench.csv written by scripts/bench-nvidia.sh")
    ap.add_argument("--png", default=None, help="the plot (default docs/bench-nvidia-bw.png unless --table/--update)")
    ap.add_argument("--title", default="this library and NVSHMEM, 2 PEs (scripts/bench-nvidia.sh)")
    ap.add_argument("--table", action="store_true", help="print the markdown table")
    ap.add_argument("--update", metavar="DOC", help="replace the table between the markers of DOC")
    a = ap.parse_args()
    rows = read_rows(a.csv)
    if a.table:
        sys.stdout.write(table(rows))
    if a.update:
        # The command as the lead would type it from the repository root (no paths of this machine).
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        doc = os.path.relpath(os.path.abspath(a.update), root)
        doc = doc if not doc.startswith("..") else os.path.basename(a.update)
        update(a.update, rows, a.csv, f"scripts/plot-bench.py {os.path.basename(a.csv)} --update {doc}")
    png = a.png
    if png is None and not a.table and not a.update:
        png = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "bench-nvidia-bw.png")
    if png:
        plot(rows, os.path.normpath(png), a.title)


if __name__ == "__main__":
    main()
