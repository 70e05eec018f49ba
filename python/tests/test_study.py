"""omkl.study: a study from Python gives the command line's numbers and files."""
import json
import os

import numpy as np
import pytest

import omkl
from conftest import shared_file, write_csv


def test_study_equals_the_command_line(tmp_path, cli, regression_stream):
    X, y = regression_stream
    write_csv(tmp_path / "s.csv", X, y)
    cli("study", "--data", tmp_path / "s.csv", "--algo", "raker:D=8", "--algo", "adaraker:D=8", "--seeds", 3,
        "--seed", 4, "--profile", "reference", "--out", tmp_path / "cli")
    study = omkl.study(data=tmp_path / "s.csv", algos=["raker:D=8", "adaraker:D=8"], seeds=3, seed=4,
                       profile="reference")
    with open(tmp_path / "cli" / "summary.json") as f:
        expected = json.load(f)
    for mine, theirs in zip(study.results, expected["results"]):
        assert mine["spec"] == theirs["spec"]
        assert mine["final_mean"] == theirs["final_mean"] and mine["final_per_seed"] == theirs["final_per_seed"]
        assert mine["resolved_params"] == theirs["resolved_params"]
    with open(tmp_path / "cli" / "curves.csv") as f:
        cli_curves = f.read().splitlines()[1:]
    rows = study.curve_rows()
    assert len(rows) == len(cli_curves)
    first = cli_curves[0].split(",")
    assert rows[0]["t"] == int(first[3]) and rows[0]["mean"] == float(first[4])
    assert study.final_mean("adaraker") == expected["results"][1]["final_mean"]
    assert study.summary["profile"] == "reference" and study.summary["n_samples"] == 300
    assert study.summary["std"] == "sample" == expected["std"]
    # --std population and std="population": the same spread, n in the denominator.
    cli("study", "--data", tmp_path / "s.csv", "--algo", "raker:D=8", "--seeds", 3, "--seed", 4, "--std",
        "population", "--out", tmp_path / "pop")
    population = omkl.study(data=tmp_path / "s.csv", algos="raker:D=8", seeds=3, seed=4, std="population")
    with open(tmp_path / "pop" / "summary.json") as f:
        expected = json.load(f)
    assert population.summary["std"] == "population" == expected["std"]
    finals = population.results[0]["final_per_seed"]
    assert population.results[0]["final_std"] == expected["results"][0]["final_std"]
    assert population.results[0]["final_std"] == pytest.approx(np.std(finals), rel=1e-12)


def test_study_writes_its_folder_and_reads_it_back(tmp_path):
    study = omkl.study(data="synthetic:dataset1", algos="raker:D=8", seeds=2, out=tmp_path / "out", curve_points=20)
    assert sorted(os.listdir(tmp_path / "out")) == ["cells", "curves.csv", "summary.json"]
    again = omkl.Study.from_directory(tmp_path / "out")
    assert again.summary == study.summary and again.curve_rows() == study.curve_rows()
    assert len(study.curve_rows()) == 20
    assert "raker" in repr(study)
    with pytest.raises(KeyError, match="no result"):
        study.final_mean("adaraker")


def test_curves_are_a_dataframe_with_pandas():
    pd = pytest.importorskip("pandas")
    study = omkl.study(data="synthetic:dataset1", algos="raker:D=8", seeds=1, curve_points=10)
    assert isinstance(study.curves, pd.DataFrame)
    assert list(study.curves.columns) == ["algo", "spec", "metric", "t", "mean", "std"]


def test_bandit_logs_and_regret_curves_come_back(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
    write_csv(tmp_path / "r.csv", X, y)
    bandit = omkl.study(data=tmp_path / "r.csv", algos="oks++", seeds=2, loss="square")
    assert bandit.logs and {"selected", "p", "kernel_loss"} <= set(bandit.logs[0]["replicates"][0])
    assert bandit.results[0]["metric"] == "mse"
    regret = omkl.study(data=tmp_path / "r.csv", algos="omkl-sfg:D=8,M=2", seeds=1, regret=True, curve_points=10)
    assert len(regret.regret_rows()) == 10 and regret.regret_rows()[0]["benchmark"]


def test_a_regression_loss_learns_plus_minus_one_targets_as_regression(tmp_path):
    # Targets of ±1 alone are a classification stream, unless a regression loss is asked for.
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(60, 2))
    write_csv(tmp_path / "pm1.csv", X, np.where(X[:, 0] > 0, 1.0, -1.0))
    as_labels = omkl.study(data=tmp_path / "pm1.csv", algos="raker:D=8", seeds=1)
    assert as_labels.results[0]["metric"] == "error_rate"
    squared = omkl.study(data=tmp_path / "pm1.csv", algos="raker:D=8", seeds=1, loss="square")
    assert squared.results[0]["metric"] == "mse"
    absolute = omkl.study(data=tmp_path / "pm1.csv", algos="raker:D=8", seeds=1, loss="absolute")
    assert absolute.results[0]["metric"] == "mae"


def test_time_matched_budgets_are_reported(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(300, 3))
    write_csv(tmp_path / "b.csv", X, 0.5 + 0.4 * np.sin(X[:, 0]))
    study = omkl.study(data=tmp_path / "b.csv", algos=["rf-ioks", "lkmbooks"], seeds=1, preset="bandit-oks",
                       loss="square", time_match="rf-oks++:D=40")
    match = study.summary["time_match"]
    assert match["reference"] == "rf-oks++:D=40"
    assert [a["spec"] for a in match["algorithms"]] == [r["spec"] for r in study.results]
    assert "D" in match["algorithms"][0] and "B" in match["algorithms"][1]


def test_federated_options_reach_the_study(tmp_path):
    # Two groups of 60 rows: a grouped federated deal of 6 clients × 20 rounds.
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(120, 2))
    site = np.repeat([0, 1], 60)
    y = 0.3 + 0.5 * X[:, 0] * X[:, 1] + 0.1 * site
    rows = ["site,a,b,y"] + [f"{int(s)},{float(a)!r},{float(b)!r},{float(t)!r}" for s, (a, b), t in zip(site, X, y)]
    (tmp_path / "g.csv").write_text("\n".join(rows) + "\n")
    common = dict(data=tmp_path / "g.csv", algos="vm-kofl", seeds=1, preset="fed-pofmkl", group_column="site",
                  rounds=20, regret=True)
    plain = omkl.study(**common)
    with_reg = omkl.study(**common, regret_include_reg=True)
    assert with_reg.summary["regret_include_reg"] is True
    assert with_reg.results[0]["final_mean"] == plain.results[0]["final_mean"]
    assert with_reg.results[0]["regret_batch"] > plain.results[0]["regret_batch"]
    # The comparator's λ and kernels (--regret-lambda, --regret-dict) change the regret, not the run.
    other = omkl.study(**common, regret_lambda=0.5, regret_dict="gauss:1+gauss:4")
    assert "λ = 0.5" in other.summary["regret_benchmark"]
    assert other.results[0]["final_mean"] == plain.results[0]["final_mean"]
    assert other.results[0]["regret_batch"] != plain.results[0]["regret_batch"]
    with pytest.raises(omkl.ConfigError, match="--regret-lambda"):
        omkl.study(**common, regret_lambda=-1.0)
    assert omkl.study(**common, within_site_order="chronological").results[0]["final_mean"] == \
        plain.results[0]["final_mean"]  # the default
    for changed in (dict(within_site_order="shuffled"), dict(client_order="listed")):
        assert omkl.study(**common, **changed).results[0]["final_mean"] != plain.results[0]["final_mean"]
    with pytest.raises(omkl.ConfigError, match="chronological, shuffled"):
        omkl.study(**common, within_site_order="sorted")
    # A CSV named .txt (LIBSVM by its name) is read with format="csv".
    (tmp_path / "g.txt").write_text("\n".join(rows) + "\n")
    as_txt = omkl.study(**dict(common, data=tmp_path / "g.txt"), format="csv")
    assert as_txt.results[0]["final_mean"] == plain.results[0]["final_mean"]
    with pytest.raises(omkl.InputError, match="g.txt:1:1"):
        omkl.study(**dict(common, data=tmp_path / "g.txt"))
    # Without algos, the preset's own: the federated table's algorithms.
    table = omkl.study(**{k: v for k, v in common.items() if k not in ("algos", "regret")})
    assert [r["algo"] for r in table.results][:3] == ["pof-mkl", "pof-mkl", "pof-mkl"]
    assert "perfedavg" in [r["algo"] for r in table.results]


def test_study_errors_name_the_problem(tmp_path):
    with pytest.raises(omkl.InputError, match="no-such.csv"):
        omkl.study(data=tmp_path / "no-such.csv")
    with pytest.raises(omkl.ConfigError, match="unknown preset"):
        omkl.study(data="synthetic:dataset1", preset="no-such-preset")
    (tmp_path / "ragged.csv").write_text("a,b,y\n1,2,3\n4,5\n")
    with pytest.raises(omkl.InputError, match="ragged.csv:3"):
        omkl.study(data=tmp_path / "ragged.csv")
    with pytest.raises(omkl.ConfigError, match="loss 'cubic'"):
        omkl.study(data="synthetic:dataset1", loss="cubic")


def test_twitter_study_gives_the_command_line_mse(tmp_path, cli):
    # The acceptance of the Python package (issue 18): AdaRaker, reference profile, 2 seeds.
    data = shared_file("twitter.csv")
    study = omkl.study(data=data, algos=["adaraker"], seeds=2, preset="jmlr19-regression", profile="reference")
    cli("study", "--data", data, "--algo", "adaraker", "--seeds", 2, "--preset", "jmlr19-regression",
        "--profile", "reference", "--out", tmp_path / "cli")
    with open(tmp_path / "cli" / "summary.json") as f:
        expected = json.load(f)["results"][0]
    assert study.final_mean("adaraker") == expected["final_mean"]
    written = omkl.plot(study, out=tmp_path / "plot" / "curves")
    assert [os.path.basename(p) for p in written] == ["curves.png", "curves.svg"]
    assert all(os.path.getsize(p) > 10000 for p in written)


def test_two_class_labels_map_to_plus_minus_one(tmp_path):
    # labels="pm1" (--labels pm1, the bandit paper's §8.2): 0/1 classes become −1/+1, so the
    # logistic loss and the error rate apply; as written they are a regression target.
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(60, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    rows = ["a,b,y"] + [f"{float(a)!r},{float(b)!r},{int(t)}" for (a, b), t in zip(X, y)]
    (tmp_path / "b.csv").write_text("\n".join(rows) + "\n")
    common = dict(data=tmp_path / "b.csv", algos="oks++", seeds=1, preset="bandit-oks", loss="logistic")
    result = omkl.study(**common, labels="pm1")
    assert result.results[0]["metric"] == "error_rate"
    with pytest.raises(omkl.ConfigError, match="--labels pm1"):
        omkl.study(**common)
    with pytest.raises(omkl.ConfigError, match="as_written, pm1"):
        omkl.study(**common, labels="01")
    # Without seeds, the preset's repetitions (the bandit paper's 10, §8.4), as omkl study.
    del common["seeds"]
    assert omkl.study(**common, labels="pm1").results[0]["seeds"] == 10


def test_one_hot_columns_become_indicator_columns(tmp_path):
    # one_hot (--one-hot): each categorical column as 0/1 indicators, one per value, as LIBSVM's
    # binarised sets (phishing's 68 columns from the UCI file's 30, spec/bandit.md §10 A13).
    rng = np.random.default_rng(7)
    a = rng.choice([-1, 0, 1], size=80)
    b = rng.choice([0, 1], size=80)
    y = np.where(a + b > 0, 1, -1)
    rows = ["a,b,y"] + [f"{int(p)},{int(q)},{int(t)}" for p, q, t in zip(a, b, y)]
    (tmp_path / "c.csv").write_text("\n".join(rows) + "\n")
    common = dict(data=tmp_path / "c.csv", algos="oks++", seeds=1, preset="bandit-oks", loss="logistic")
    assert omkl.study(**common).summary["n_features"] == 2
    assert omkl.study(**common, one_hot="all").summary["n_features"] == 5
    assert omkl.study(**common, one_hot="a").summary["n_features"] == 4
    with pytest.raises(omkl.ConfigError, match="no feature column 'z'"):
        omkl.study(**common, one_hot="z")


def test_a_grid_runs_every_configuration_and_names_the_best():
    # Values joined by '|' are a grid: every combination a configuration, the best in summary["grids"].
    study = omkl.study(data="synthetic:dataset2:200", algos="rf-ogd:D=8,eta=0.5|0.05|0.005", seeds=2, curve_points=5)
    specs = [r["spec"] for r in study.results]
    assert specs == ["rf-ogd:D=8,eta=0.5", "rf-ogd:D=8,eta=0.05", "rf-ogd:D=8,eta=0.005"]
    assert all(r["grid"] == "rf-ogd:D=8,eta=0.5|0.05|0.005" for r in study.results)
    (grid,) = study.summary["grids"]
    best = min(study.results, key=lambda r: r["final_mean"])
    assert grid["best_spec"] == best["spec"] and grid["best_final_mean"] == best["final_mean"]
    assert grid["configurations"] == 3


def test_a_study_whose_every_seed_diverged_reads_and_prints():
    # Every seed of the first configuration overflows: its final_mean is None (summary.json's
    # null), which repr printed with a format that raised TypeError.
    study = omkl.study(data="synthetic:dataset2:300", algos=["raker:D=8,eta=1e6,step_scale=1e6", "raker:D=8"],
                       seeds=2, curve_points=5)
    diverged, fine = study.results
    assert diverged["diverged"] == 2 and diverged["final_mean"] is None
    assert study.final_mean("raker:D=8,eta=1e6,step_scale=1e6") is None
    text = repr(study)
    assert "raker:D=8,eta=1e6,step_scale=1e6" in text and "mse diverged (2 seeds)" in text
    assert f"{fine['final_mean']:.6g} ± " in text


def test_final_mean_takes_an_exact_spec_before_an_algorithm_name():
    study = omkl.study(data="synthetic:dataset2:300", algos=["raker:D=8", "raker:D=8,eta=0.1", "adaraker:D=8"],
                       seeds=1, curve_points=5)
    # "raker:D=8" is one configuration's full spec: it wins over the two whose algorithm is raker.
    assert study.final_mean("raker:D=8") == study.results[0]["final_mean"]
    assert study.final_mean("adaraker") == study.results[2]["final_mean"]  # one of that algorithm
    with pytest.raises(KeyError, match="more than one result"):
        study.final_mean("raker")


def test_algos_may_be_any_iterable_and_bad_counts_are_config_errors():
    generated = omkl.study(data="synthetic:dataset2:200", algos=(a for a in ["raker:D=8", "rf-ogd:D=8"]), seeds=1,
                           curve_points=5)
    assert [r["spec"] for r in generated.results] == ["raker:D=8", "rf-ogd:D=8"]
    common = dict(data="synthetic:dataset2:200", algos="raker:D=8")
    for arguments, named in [({"seeds": -1}, "seeds must be at least 1, got -1"),
                             ({"curve_points": -1}, "curve_points must be at least 0"),
                             ({"threads": 1.5}, "threads must be an integer"),
                             ({"seed": -3}, "seed must be at least 0"),
                             ({"clients": -1}, "clients must be at least 0"),
                             ({"profile": None}, "profile must be a string"),
                             ({"algos": ["raker", 3]}, r"algos\[1\] must be a string"),
                             ({"data": None}, "data must be a path"),
                             ({"regret_lambda": "x"}, "regret_lambda must be a number")]:
        with pytest.raises(omkl.ConfigError, match=named):
            omkl.study(**{**common, **arguments})


def test_a_raw_stream_far_from_unit_scale_warns_unless_a_normalisation_is_given(tmp_path, regression_stream):
    X, y = regression_stream
    write_csv(tmp_path / "loud.csv", X * 1000, y + 50)
    with pytest.warns(UserWarning, match=r"loud is not normalised and far from unit scale \(feature 'x\d' spans"
                                         r".*the target .*normalize='none' keeps the values"):
        omkl.study(data=tmp_path / "loud.csv", algos="raker:D=8", seeds=1)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for normalize in ("none", "minmax-all"):
            omkl.study(data=tmp_path / "loud.csv", algos="raker:D=8", seeds=1, normalize=normalize)
        write_csv(tmp_path / "quiet.csv", X, y)
        omkl.study(data=tmp_path / "quiet.csv", algos="raker:D=8", seeds=1)


def test_shuffle_equals_the_command_lines_shuffle(tmp_path, cli, regression_stream):
    X, y = regression_stream
    write_csv(tmp_path / "s.csv", X, y)
    cli("study", "--data", tmp_path / "s.csv", "--algo", "raker:D=8", "--seeds", 3, "--seed", 2, "--shuffle",
        "--out", tmp_path / "cli")
    with open(tmp_path / "cli" / "summary.json") as f:
        expected = json.load(f)
    shuffled = omkl.study(data=tmp_path / "s.csv", algos="raker:D=8", seeds=3, seed=2, shuffle=True)
    in_order = omkl.study(data=tmp_path / "s.csv", algos="raker:D=8", seeds=3, seed=2)
    assert shuffled.results[0]["final_per_seed"] == expected["results"][0]["final_per_seed"]
    assert shuffled.results[0]["final_per_seed"] != in_order.results[0]["final_per_seed"]
