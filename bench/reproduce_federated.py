#!/usr/bin/env python3
"""Reproduce the POF-MKL tables (Ghari & Shen, NeurIPS 2022) with the `omkl` CLI.

Runs `omkl study --preset fed-pofmkl --seeds 20` on the datasets of the paper that are in
../shared/data — Naval (naval.csv, the 15-input file, i.i.d. split into 23 clients) and Air
(beijing_air.csv, four sites, --group-column site, 240 clients) — and compares with the published
values (spec/federated.md section 5, copied below):

* Table 1 (MSE x1e-3): each POF-MKL cell within +-20 %, each baseline within +-35 % (section 5.5);
  PerFedAvg has no target (its framework and hyper-parameters are unknown);
* the rankings of section 5.5;
* Table 3 (mean cumulative client regret): the published numbers are about T x MSE, i.e. measured
  against a batch comparator (section 5.4): compared with `regret_batch` (`omkl study --regret`, the
  best of the 51 Gaussians fitted on the pooled data: exact kernel ridge up to 12 000 pooled rows,
  Naval's included, about 20 min on 2 cores; random-feature ridge above), with Table 1's
  tolerances as an indication; eq. (11) (`regret_eq11`, the algorithm's own best kernel per client)
  is shown beside it, and both again with `--regret-include-reg` (section 4.7's regret.include_reg);
* speed: a 20-draw Naval study of POF-MKL (M = 1, D = 100) on one CPU thread against the paper's
  1.22 s (which is one client's 500 steps in Python, section 4.6).

Nothing is tuned: every method runs with the preset's published settings (eta = eta_k = 1/sqrt(T),
xi = 1, lambda = 1e-3, D from M). Misses are listed with diagnostics that explain them (runs with a
parameter changed are labelled as such and never replace the table's values). UJI and WEC are not in
../shared/data. Standard library only. Example:

    python3 bench/reproduce_federated.py --omkl build/omkl --threads 2 --write-results
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys

from harness_common import cpu_model, log, sh, write_marked_block, run_study_command

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN_MARK = "<!-- federated:begin -->"
END_MARK = "<!-- federated:end -->"
PRESET = "fed-pofmkl"

# key, label, CLI spec, kind (pof: +-20 %, base: +-35 %, none: no target)
METHODS = [
    ("perfedavg", "PerFedAvg", "perfedavg", "none"),
    ("ofskl", "OFSKL", "ofskl", "base"),
    ("ofmkl-avg", "OFMKL-Avg", "ofmkl-avg", "base"),
    ("vm-kofl", "vM-KOFL", "vm-kofl", "base"),
    ("em-kofl", "eM-KOFL", "em-kofl", "base"),
    ("pof1", "POF-MKL M=1", "pof-mkl:M=1", "pof"),
    ("pof25", "POF-MKL M=25", "pof-mkl:M=25", "pof"),
    ("pof51", "POF-MKL M=51", "pof-mkl:M=51", "pof"),
]
TOL = {"pof": 0.20, "base": 0.35, "none": None}

# spec section 5.1 (Table 1, MSE x1e-3) and 5.3 (Table 3, mean regret +- std across clients).
PAPER_MSE = {
    "naval": {"perfedavg": 118.60, "ofskl": 77.77, "ofmkl-avg": 33.25, "vm-kofl": 26.42, "em-kofl": 28.64,
              "pof1": 16.16, "pof25": 16.82, "pof51": 16.65},
    "air": {"perfedavg": 13.68, "ofskl": 13.65, "ofmkl-avg": 10.63, "vm-kofl": 10.58, "em-kofl": 21.94,
            "pof1": 9.27, "pof25": 9.34, "pof51": 9.38},
}
PAPER_REGRET = {
    "naval": {"ofmkl-avg": 16.95, "vm-kofl": 13.40, "em-kofl": 14.92, "pof1": 8.33, "pof25": 8.67, "pof51": 8.55},
    "air": {"ofmkl-avg": 3.05, "vm-kofl": 3.02, "em-kofl": 8.53, "pof1": 2.95, "pof25": 2.98, "pof51": 3.01},
}
DATASETS = [
    # key, label, file, extra CLI arguments
    ("naval", "Naval", "naval.csv", []),
    ("air", "Air", "beijing_air.csv", ["--group-column", "site"]),
]
# Diagnostics of the misses: one parameter changed each, labelled; never part of the table.
DIAGNOSTICS = [
    ("vm-kofl:weight_loss_reduction=mean", "vM-KOFL with the clients' losses averaged, not summed (§3.3, A12)"),
    ("pof-mkl:M=51,eta_k=1", "POF-MKL M=51 with the weight step η_k = 1 instead of 1/√T"),
    ("pof-mkl:M=1,eta_k=1", "POF-MKL M=1 with η_k = 1"),
    ("pof-mkl:M=1,rbf_convention=textbook", "POF-MKL M=1 with the textbook bandwidth convention (§4.4)"),
]
PAPER_MACHINE = "Intel Core i7-10510U @ 1.80 GHz, Python/NumPy (spec section 5)"


def machine_info() -> dict:
    return {"cpu": cpu_model() or platform.processor(), "cores": os.cpu_count(), "os": platform.platform(),
            "git": sh(["git", "-C", REPO, "describe", "--always", "--dirty", "--abbrev=12"]), "date": sh(["date"])}


def run_study(omkl: str, data: str, extra: list[str], specs: list[str], seeds: int, threads: int,
              out_dir: str, regret: bool = False, include_reg: bool = False) -> dict:
    # The reference profile (ARCHITECTURE.md: the reproduction harness runs the authors' code's
    # behaviour): selection on the pre-update weights, bins always sorted (spec section 7, C4/C5).
    cmd = [omkl, "study", "--preset", PRESET, "--profile", "reference", "--data", data, *extra, "--seeds", str(seeds),
           "--threads", str(threads), "--out", out_dir] + (["--regret"] if regret else []) + \
          (["--regret-include-reg"] if include_reg else [])
    for s in specs:
        cmd += ["--algo", s]
    return run_study_command(cmd, out_dir)


def fmt(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def pstd(values: list[float]) -> float:
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--omkl", default=os.path.join(REPO, "build", "omkl"))
    ap.add_argument("--data-dir", default=os.path.join(REPO, "..", "shared", "data"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--work", default=os.path.join(REPO, "build", "reproduce_federated"))
    ap.add_argument("--write-results", action="store_true", help="replace the block in bench/RESULTS.md")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()

    rows, misses, diag_rows, regret_rows, rank_lines = [], [], [], [], []
    runs = {}
    for key, label, file, extra in DATASETS:
        path = os.path.join(args.data_dir, file)
        if not os.path.exists(path):
            log(f"skipping {label}: {path} not found")
            continue
        info = run_study(args.omkl, path, extra, [m[2] for m in METHODS], args.seeds, args.threads,
                         os.path.join(args.work, key), regret=True)
        runs[key] = info
        if info["rc"] != 0:
            misses.append(f"{label}: the study failed: {info.get('error', '')}")
            continue
        measured = {}
        for mkey, mlabel, spec, kind in METHODS:
            r = info["results"].get(spec)
            if r is None:
                continue
            mse = r["final_mean"] * 1e3
            per_seed = [v * 1e3 for v in r["final_per_seed"] if v is not None]
            paper = PAPER_MSE[key][mkey]
            tol = TOL[kind]
            rel = (mse - paper) / paper
            within = None if tol is None else abs(rel) <= tol
            measured[mkey] = mse
            rows.append((label, mlabel, r["params"].get("M", "—"), r["params"].get("D", "—"), paper, mse,
                         pstd(per_seed), r.get("final_std_clients", float("nan")) * 1e3, rel, tol, within,
                         r.get("uplink_floats_per_client_step"), r["seconds_mean"],
                         r.get("client_seconds_per_client")))
            if within is False:
                misses.append(f"{label} {mlabel}: measured {mse:.2f} vs paper {paper:.2f} ({rel:+.0%}, "
                              f"tolerance ±{tol:.0%})")
            if mkey in PAPER_REGRET[key]:
                regret_rows.append((label, mlabel, PAPER_REGRET[key][mkey], r.get("regret_batch"),
                                    r.get("regret_batch_std_clients"), r.get("regret_eq11"),
                                    r.get("regret_eq11_std_clients"), tol))
        # Table 3 again with regret.include_reg (section 5.4: "reported with include_reg both false
        # and true"); the same draws, so the MSEs are those above.
        reg_specs = [spec for mkey, _, spec, _ in METHODS if mkey in PAPER_REGRET[key]]
        rinfo = run_study(args.omkl, path, extra, reg_specs, args.seeds, args.threads,
                          os.path.join(args.work, key + "-include-reg"), regret=True, include_reg=True)
        if rinfo["rc"] != 0:
            misses.append(f"{label}: the include_reg study failed: {rinfo.get('error', '')}")
        with_reg = {spec: rinfo["results"].get(spec) or {} for spec in reg_specs} if rinfo["rc"] == 0 else {}
        for i, row in enumerate(regret_rows):
            if row[0] == label:
                spec = next(s for mk, ml, s, _ in METHODS if ml == row[1])
                r = with_reg.get(spec, {})
                regret_rows[i] = row + (r.get("regret_batch"), r.get("regret_batch_std_clients"),
                                        r.get("regret_eq11"))
        # Section 5.5 rankings.
        pof = {k: v for k, v in measured.items() if k.startswith("pof")}
        others = {k: v for k, v in measured.items() if not k.startswith("pof")}
        if pof and others:
            best_pof, best_other = min(pof.values()), min(others.items(), key=lambda kv: kv[1])
            ok = best_pof < best_other[1]
            rank_lines.append(f"{label}: POF-MKL has the lowest MSE of all methods — "
                              f"{'yes' if ok else 'no'} (best POF-MKL {best_pof:.2f}, best other "
                              f"{best_other[0]} {best_other[1]:.2f})")
        if "ofmkl-avg" in measured and pof:
            ok = measured["ofmkl-avg"] > max(pof.values())
            rank_lines.append(f"{label}: OFMKL-Avg worse than every POF-MKL — {'yes' if ok else 'no'} "
                              f"({measured['ofmkl-avg']:.2f} vs {', '.join(f'{v:.2f}' for v in pof.values())})")
        order = sorted(measured.items(), key=lambda kv: -kv[1])
        if key == "naval":
            worst2 = {k for k, _ in order[:2]}
            ok = worst2 == {"perfedavg", "ofskl"}
            rank_lines.append(f"{label}: PerFedAvg and OFSKL are the two worst — {'yes' if ok else 'no'} "
                              f"(worst two: {', '.join(k for k, _ in order[:2])})")
        if key == "air":
            ok = order[0][0] == "em-kofl"
            rank_lines.append(f"{label}: eM-KOFL clearly the worst — {'yes' if ok else 'no'} "
                              f"(worst: {order[0][0]} {order[0][1]:.2f}, next {order[1][0]} {order[1][1]:.2f})")
        # Diagnostics.
        dinfo = run_study(args.omkl, path, extra, [d[0] for d in DIAGNOSTICS], min(args.seeds, 5), args.threads,
                          os.path.join(args.work, key + "-diagnostics"))
        for spec, what in DIAGNOSTICS:
            r = dinfo["results"].get(spec)
            if r is not None:
                diag_rows.append((label, what, spec, r["final_mean"] * 1e3, r["seeds"]))

    speed = None
    naval = os.path.join(args.data_dir, "naval.csv")
    if not args.skip_speed and os.path.exists(naval):
        info = run_study(args.omkl, naval, [], ["pof-mkl:M=1"], 20, 1, os.path.join(args.work, "speed"))
        if info["rc"] == 0:
            r = info["results"]["pof-mkl:M=1"]
            speed = (info["wall_s"], r["seconds_mean"])

    mach = machine_info()
    L = [f"Run {mach['date']} on {mach['cpu']} ({mach['cores']} hardware threads), {mach['os']}, git "
         f"{mach['git']}; `python3 bench/reproduce_federated.py --seeds {args.seeds}` (preset {PRESET}, "
         f"profile reference). Paper: {PAPER_MACHINE}.", ""]
    for key, info in runs.items():
        L.append(f"- `{info['cmd']}` — {info['wall_s']:.1f} s wall")
    L += ["", "### Table 1: MSE ×10⁻³ (mean over the draws; std over draws and across clients)", "",
          "| data | algorithm | M | D | paper | measured | std draws | std clients | Δ | tolerance | within | "
          "uplink floats/step | s/draw | client s ÷ K |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (label, m, M, D, paper, mse, sd, sdc, rel, tol, within, up, sec, client_sec) in rows:
        L.append(f"| {label} | {m} | {M} | {D} | {paper:.2f} | {mse:.2f} | {sd:.2f} | {fmt(sdc)} | {rel:+.0%} | "
                 f"{'—' if tol is None else f'±{tol:.0%}'} | {'—' if within is None else ('yes' if within else '**no**')}"
                 f" | {fmt(up, 0)} | {sec:.3f} | {fmt(client_sec, 4)} |")
    L += ["", "*s/draw*: the loop's wall time per draw; *client s ÷ K*: that time less the server's aggregation and "
          "weight step, ÷ K (spec §4.6's nearest analogue of the paper's one-client time; — where a walk runs both "
          "sides in one program)."]
    L += ["", "### Rankings (spec §5.5)", ""] + [f"- {line}" for line in rank_lines]
    L += ["", "### Outside the tolerance (automatic list)", ""]
    L += [f"- {m}" for m in misses] if misses else ["- none"]
    if diag_rows:
        L += ["", "Diagnostics (one parameter changed each, ≤ 5 draws; not results):", "",
              "| data | change | spec | MSE ×10⁻³ | draws |", "|---|---|---|---|---|"]
        for label, what, spec, mse, seeds in diag_rows:
            L.append(f"| {label} | {what} | `{spec}` | {mse:.2f} | {seeds} |")
        L += ["", "How to read them: POF-MKL(M = 51), vM-KOFL and OFMKL-Avg share θ bit for bit (§3.3, tested), so "
              "their MSEs differ only by how the kernels are weighted. With the published η_k = 1/√T a client's "
              "private weights see only its own 500 losses and stay close to uniform (POF-MKL lands between "
              "OFMKL-Avg's uniform mean and vM-KOFL, whose server weights see K clients' summed losses); the "
              "paper's ordering — personal weights far ahead of global ones — appears only with a much larger "
              "weight step (the η_k = 1 rows), which the paper does not state. These rows explain the misses; "
              "they do not replace the table's values."]
    L += ["", "### Table 3: mean cumulative client regret at T = 500 (± std across clients)", "",
          "`regret_batch`: against the best of the 51 Gaussians fitted by random-feature ridge (D = 500) on the "
          "pooled data (spec §4.7; the published numbers are ≈ T × MSE, §5.4); Table 1's tolerances as an "
          "indication. `regret_eq11`: eq. (11), the algorithm's own best kernel per client (it can be negative). "
          "`+ λ‖θ̄‖²`: the same with `--regret-include-reg` (spec §4.7's `regret.include_reg`; λ = 1e-3): the "
          "algorithm's loss gains λ‖θ̄_{k,t}‖² of the parameter each prediction used, and eq. (11)'s comparators "
          "λ‖θ_{i,t}‖².", "",
          "| data | algorithm | paper | regret_batch | Δ | within (indicative) | regret_eq11 | "
          "regret_batch + λ‖θ̄‖² | Δ | regret_eq11 + λ‖θ‖² |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for label, m, paper, reg, sdc, eq11, eq11_sd, tol, *with_reg in regret_rows:
        rel = None if reg is None else (reg - paper) / paper
        within = None if rel is None or tol is None else abs(rel) <= tol
        reg2, sdc2, eq11_2 = with_reg if with_reg else (None, None, None)
        rel2 = None if reg2 is None else (reg2 - paper) / paper
        L.append(f"| {label} | {m} | {paper:.2f} | {fmt(reg)} ± {fmt(sdc)} | "
                 f"{'—' if rel is None else f'{rel:+.0%}'} | {'—' if within is None else ('yes' if within else 'no')} | "
                 f"{fmt(eq11)} ± {fmt(eq11_sd)} | {fmt(reg2)} ± {fmt(sdc2)} | "
                 f"{'—' if rel2 is None else f'{rel2:+.0%}'} | {fmt(eq11_2)} |")
    for key, info in runs.items():
        bench = info.get("summary", {}).get("regret_benchmark")
        if bench:
            L.append(f"\n{key}: comparator {bench}.")
    if speed:
        wall, per = speed
        L += ["", "### Speed", "",
              f"Naval, POF-MKL M = 1, D = 100, 20 draws on one thread (`--threads 1`): {wall:.2f} s for the study, "
              f"{per:.3f} s per draw (all 23 clients × 500 rounds). The paper's 1.22 s is one client's 500 steps in "
              f"Python (spec §4.6): {1.22 * 23 / per:.0f}× that for the whole federation of a draw, "
              f"{1.22 / per:.0f}× per draw against one client's time."]
    md = "\n".join(L) + "\n"
    print(md)
    if args.write_results:
        write_marked_block(os.path.join(REPO, "bench", "RESULTS.md"), md, BEGIN_MARK, END_MARK,
                           "## POF-MKL (NeurIPS 2022): Tables 1 and 3 on Naval and Air")
    return 0


if __name__ == "__main__":
    sys.exit(main())
