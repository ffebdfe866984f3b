#!/usr/bin/python3
"""The compute_efficiency of analysis/validation/clusters/*.yaml, from DeepBench's published results.

    deepbench_efficiency.py --git-dir DEEPBENCH_GIT [--commit REV]
    deepbench_efficiency.py RESULTS_TRAIN_DIR          (a folder holding DeepBench_NV_*.xlsx)

The rule (docs/design/published-validation.md): for each GPU, every FP32 training convolution of
DeepBench's results workbook (sheet "Results FP32", section "Convolution": 94 problems, each timed
forward, backward with respect to the inputs and backward with respect to the parameters; kernels
reported N/A are left out) gives one efficiency, its TERAFLOPS column (DeepBench's count: the
direct convolution's 2 N K P Q C R S FLOPs over the time, the count Tessera's roofline uses) over
the GPU's datasheet fp32 peak. compute_efficiency is the median of those, rounded to 2 digits. The
median, not a FLOP-weighted mean: Winograd and FFT kernels run fewer multiplications than the
direct count says, so their "efficiencies" exceed 1 (up to 2.5 here) and would dominate a mean;
3D float32 convolutions, the workload this serves, have no Winograd algorithm in cuDNN 7.

Reads .xlsx with the standard library only (zipfile + xml). Source: github.com/baidu-research/DeepBench,
results/train/DeepBench_NV_{V100,P100,T4}.xlsx (commit da81ba7820739e2e506dc27f382d15be5479f98f).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

# GPU of the workbook -> (fp32 peak TFLOP/s, where it comes from, the MLPerf GPUs it stands for)
GPUS = {
    "V100": (15.7, "NVIDIA Tesla V100 datasheet, SXM2 (DeepBench's host, a Xeon E5-2698 v4, is "
             "DGX-1's)", "V100-SXM2-16GB (ABCI, Cori GPU, HAL)"),
    "P100": (9.3, "NVIDIA Tesla P100 PCIe datasheet (DeepBench's README: its P100s sat in 8-GPU "
             "PCIe nodes)", "P100-PCIE-16GB (Piz Daint)"),
    "T4": (8.1, "NVIDIA T4 datasheet", "Quadro RTX 5000 (Frontera RTX): the same TU104 chip; "
           "DeepBench has no RTX 5000"),
}


def read_sheets(path):
    """{sheet name: [ {column letter: text} per row ]} of an .xlsx file."""
    z = zipfile.ZipFile(path)
    strings = []
    if "xl/sharedStrings.xml" in z.namelist():
        for si in ET.fromstring(z.read("xl/sharedStrings.xml")).findall(MAIN + "si"):
            strings.append("".join(t.text or "" for t in si.iter(MAIN + "t")))
    rels = {r.get("Id"): r.get("Target")
            for r in ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))}
    sheets = {}
    for sheet in ET.fromstring(z.read("xl/workbook.xml")).find(MAIN + "sheets"):
        target = rels[sheet.get(REL + "id")].lstrip("/")
        target = target if target.startswith("xl/") else "xl/" + target
        rows = []
        for row in ET.fromstring(z.read(target)).iter(MAIN + "row"):
            cells = {}
            for c in row.findall(MAIN + "c"):
                column = re.match("[A-Z]+", c.get("r")).group()
                v = c.find(MAIN + "v")
                if v is None:
                    continue
                cells[column] = strings[int(v.text)] if c.get("t") == "s" else v.text
            rows.append(cells)
        sheets[sheet.get("name")] = rows
    return sheets


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def conv_teraflops(sheets):
    """Achieved TFLOP/s of every FP32 convolution kernel (3 per problem where reported)."""
    rows = sheets["Results FP32"]
    start = next(i for i, r in enumerate(rows) if (r.get("A") or "").strip() == "Convolution")
    header = {(v or "").strip(): k for k, v in rows[start + 1].items()}
    columns = [header["FWD TERAFLOPS"], header["BWD INPUTS TERAFLOPS"],
               header["BWD PARMS TERAFLOPS"]]
    n_column = header["N"]
    values, problems = [], 0
    for row in rows[start + 2:]:
        if number(row.get(n_column)) is None:
            if problems:
                break  # the end of the section
            continue
        problems += 1
        values += [v for v in (number(row.get(c)) for c in columns) if v is not None]
    return problems, values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", help="a folder with DeepBench_NV_<GPU>.xlsx")
    parser.add_argument("--git-dir", help="a DeepBench git repository (bare is fine)")
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args(argv)
    if bool(args.folder) == bool(args.git_dir):
        parser.error("give a folder or --git-dir")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder
        if args.git_dir:
            folder = tmp
            for gpu in GPUS:
                blob = subprocess.run(
                    ["git", "--git-dir", args.git_dir, "show",
                     f"{args.commit}:results/train/DeepBench_NV_{gpu}.xlsx"],
                    check=True, stdout=subprocess.PIPE).stdout
                with open(os.path.join(tmp, f"DeepBench_NV_{gpu}.xlsx"), "wb") as f:
                    f.write(blob)
        print("| DeepBench GPU | fp32 peak TFLOP/s | problems | kernels | median efficiency | "
              "quartiles | compute_efficiency | used for |")
        print("|---|---|---|---|---|---|---|---|")
        for gpu, (peak, source, used_for) in GPUS.items():
            sheets = read_sheets(os.path.join(folder, f"DeepBench_NV_{gpu}.xlsx"))
            problems, tflops = conv_teraflops(sheets)
            eff = [t / peak for t in tflops]
            q1, q2, q3 = statistics.quantiles(eff, n=4)
            print(f"| {gpu} | {peak} ({source}) | {problems} | {len(eff)} | "
                  f"{statistics.median(eff):.3f} | {q1:.2f} / {q2:.2f} / {q3:.2f} | "
                  f"{round(statistics.median(eff), 2):.2f} | {used_for} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
