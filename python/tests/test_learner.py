"""omkl.Learner: the library's learner over NumPy arrays."""
import pickle

import numpy as np
import pytest

import omkl
from conftest import read_predictions, write_csv


def test_partial_fit_returns_the_predictions_made_before_each_update(regression_stream):
    X, y = regression_stream
    block = omkl.Learner("raker:D=8", n_features=4, seed=3, horizon=len(y))
    one_by_one = omkl.Learner("raker:D=8", n_features=4, seed=3, horizon=len(y))
    predictions = block.partial_fit(X, y)
    assert predictions.shape == (len(y),)
    assert predictions[0] == 0.0  # nothing learned yet
    singles = np.array([one_by_one.learn_one(x, t) for x, t in zip(X, y)])
    np.testing.assert_array_equal(predictions, singles)  # blocks equal steps, bit for bit
    assert block.n_seen == len(y)
    # Learning helped: the second half is predicted better than the variance of y.
    assert np.mean((predictions[150:] - y[150:]) ** 2) < 0.6 * np.var(y)


def test_predict_leaves_the_model_as_it_was(regression_stream):
    X, y = regression_stream
    learner = omkl.Learner("adaraker:D=8", n_features=4, seed=1, horizon=len(y))
    learner.partial_fit(X[:100], y[:100])
    first = learner.predict(X[100:110])
    assert learner.predict(X[100:110]).tolist() == first.tolist()
    assert learner.n_seen == 100
    assert learner.predict_one(X[100]) == first[0]
    # The next sample's online prediction is what predict said.
    assert learner.partial_fit(X[100:101], y[100:101])[0] == first[0]


def test_the_same_numbers_as_the_command_line(tmp_path, cli, regression_stream):
    X, y = regression_stream
    write_csv(tmp_path / "s.csv", X, y)
    cli("run", "--data", tmp_path / "s.csv", "--algo", "raker:D=16", "--seed", 7, "--predictions", tmp_path / "p.csv")
    learner = omkl.Learner("raker:D=16", n_features=4, seed=7, horizon=len(y))
    np.testing.assert_array_equal(learner.partial_fit(X, y), read_predictions(tmp_path / "p.csv"))


def test_save_load_pickle_and_bytes_continue_bit_for_bit(tmp_path, regression_stream):
    X, y = regression_stream
    learner = omkl.Learner("omkl-sfg:D=8,M=2,dict=gauss:0.5+gauss:1+gauss:2", n_features=4, seed=2, horizon=300)
    learner.partial_fit(X[:150], y[:150])
    learner.save(tmp_path / "m.ckpt")
    copies = [omkl.Learner.load(tmp_path / "m.ckpt"), pickle.loads(pickle.dumps(learner)),
              omkl.Learner.from_bytes(learner.to_bytes())]
    expected = learner.partial_fit(X[150:], y[150:])
    for copy in copies:
        assert copy.n_seen == 150 and copy.spec == learner.spec
        np.testing.assert_array_equal(copy.partial_fit(X[150:], y[150:]), expected)


def test_parameters_and_kernel_weights_are_readable(regression_stream):
    X, y = regression_stream
    learner = omkl.Learner("raker:D=8,dict=gauss:0.1+gauss:1+gauss:10", n_features=4, horizon=300)
    assert learner.parameters["D"] == "8"
    assert "eta" in learner.parameters  # defaults too, not only what was given
    np.testing.assert_allclose(learner.kernel_weights, [1 / 3] * 3)
    learner.partial_fit(X, y)
    weights = learner.kernel_weights
    assert weights.shape == (3,) and abs(weights.sum() - 1) < 1e-12 and len(set(weights)) > 1


def test_classification_learner_takes_labels_plus_minus_one(classification_stream):
    X, y = classification_stream
    learner = omkl.Learner("raker:D=16", n_features=3, task="classification", horizon=300)
    scores = learner.partial_fit(X, y)
    assert np.mean(np.sign(scores[100:]) != y[100:]) < 0.35
    with pytest.raises(omkl.InputError, match="label"):
        learner.partial_fit(X[:1], [0.0])


def test_errors_are_the_library_errors_with_its_messages(regression_stream):
    X, y = regression_stream
    with pytest.raises(omkl.ConfigError, match="unknown algorithm 'rakr'"):
        omkl.Learner("rakr", n_features=4)
    with pytest.raises(omkl.ConfigError, match="D"):
        omkl.Learner("raker:D=-3", n_features=4)
    with pytest.raises(omkl.ConfigError, match="'eta' has no default when the stream length is unknown"):
        omkl.Learner("raker:D=8", n_features=4)  # horizon 0: give eta
    learner = omkl.Learner("raker:D=8", n_features=4, horizon=300)
    with pytest.raises(omkl.InputError, match="3 features, the model expects 4"):
        learner.partial_fit(X[:, :3], y)
    with pytest.raises(omkl.InputError, match="one target per row"):
        learner.partial_fit(X, y[:-1])
    bad = X[:5].copy()
    bad[2, 1] = np.nan
    with pytest.raises(omkl.InputError, match="sample 3: feature 2 is nan"):
        learner.partial_fit(bad, y[:5])
    assert learner.n_seen == 0  # a refused block changes nothing
    assert learner.failed is None  # a refused sample does not fail the learner
    with pytest.raises(omkl.InputError, match="no-such.ckpt"):
        omkl.Learner.load("no-such.ckpt")
    with pytest.raises(omkl.InputError, match="model-7"):
        omkl.Learner.from_bytes(b"not a checkpoint", name="model-7")
    # Both are ValueErrors too, and every library error is an omkl.Error.
    assert issubclass(omkl.InputError, ValueError) and issubclass(omkl.ConfigError, omkl.Error)


def test_a_diverged_model_raises_diverged_error_naming_the_sample():
    learner = omkl.Learner("raker:D=8", n_features=3, horizon=100)
    learner.partial_fit([[0.1, 0.2, 0.3]], [0.5])
    # Features near the largest double: the random features overflow at once.
    with pytest.raises(omkl.DivergedError, match="diverged at sample 2") as caught:
        learner.partial_fit([[1e308, 1e308, 1e308]], [1.0])
    error = caught.value
    assert error.sample == 2 and not np.isfinite(error.prediction)
    assert isinstance(error, omkl.Error) and isinstance(error, ArithmeticError)
    assert learner.failed is not None and "diverged at sample 2" in learner.failed
    with pytest.raises(omkl.Error, match="diverged at sample 2"):  # nothing of it is saved
        learner.to_bytes()


def test_registry_is_listed():
    names = [name for name, family, summary in omkl.algorithms()]
    assert {"raker", "adaraker", "omkl-sfg", "pof-mkl", "oks++"} <= set(names)
    assert "(family: raker)" in omkl.describe("adaraker")
    assert "jmlr19-regression" in omkl.presets()


def test_long_calls_release_the_gil(regression_stream):
    # While one thread is inside partial_fit, Python code in another keeps running: with the GIL
    # held through the call, the watching loop below would stall for the whole call.
    import threading
    import time

    X, y = regression_stream
    X = np.tile(X, (4000, 1))
    y = np.tile(y, 4000)
    learner = omkl.Learner("raker:D=64", n_features=4, seed=5, horizon=len(y))
    worker = threading.Thread(target=learner.partial_fit, args=(X, y))
    started = time.perf_counter()
    last = started
    longest_stall = 0.0
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest_stall = max(longest_stall, now - last)
        last = now
    worker.join()
    elapsed = time.perf_counter() - started
    assert learner.n_seen == len(y)
    assert elapsed > 0.1, f"the call ({elapsed:.3f} s) was too short to tell"
    assert longest_stall < elapsed / 2, f"Python stalled {longest_stall:.3f} s of a {elapsed:.3f} s call"


def test_one_learner_shared_by_threads_takes_turns(regression_stream):
    # The GIL is released inside the calls, so two threads on one learner must not overlap in
    # it: interleaved blocks give the same numbers as the same blocks one after the other.
    import threading

    X, y = regression_stream
    X, y = np.tile(X, (50, 1)), np.tile(y, 50)
    shared = omkl.Learner("raker:D=32", n_features=4, seed=2, horizon=len(y))
    threads = [threading.Thread(target=shared.predict, args=(X,)) for _ in range(3)]
    threads.append(threading.Thread(target=shared.partial_fit, args=(X, y)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    alone = omkl.Learner("raker:D=32", n_features=4, seed=2, horizon=len(y))
    alone.partial_fit(X, y)
    assert shared.n_seen == len(y)
    np.testing.assert_array_equal(shared.predict(X[:10]), alone.predict(X[:10]))


def test_a_command_line_model_serves_new_rows_from_python(tmp_path, cli, regression_stream):
    # A model trained by `omkl run --normalize zscore` keeps the normalisation and its training
    # statistics; in Python, preprocess() brings new rows to that scale, and predict() then gives
    # what `omkl predict` gives for them.
    X, y = regression_stream
    X = X * 40.0 + 7.0  # raw features far from the unit scale
    write_csv(tmp_path / "train.csv", X[:200], y[:200])
    write_csv(tmp_path / "new.csv", X[200:], y[200:])
    cli("run", "--data", tmp_path / "train.csv", "--algo", "raker:D=16", "--normalize", "zscore",
        "--save", tmp_path / "m.ckpt")
    cli("predict", "--model", tmp_path / "m.ckpt", "--data", tmp_path / "new.csv", "--predictions", tmp_path / "p.csv")
    served = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)
    model = omkl.Learner.load(tmp_path / "m.ckpt")
    assert model.preprocessing == "zscore"
    assert model.feature_names == ["x0", "x1", "x2", "x3"]  # the training header's, kept in the model
    rows, targets = model.preprocess(X[200:], y[200:])
    np.testing.assert_array_equal(model.predict(rows), served[:, 2])
    np.testing.assert_array_equal(targets, served[:, 1])
    assert not np.array_equal(model.predict(X[200:]), served[:, 2])  # raw rows would be wrong
    # Models without a normalisation leave rows as they are.
    plain = omkl.Learner("raker:D=8", n_features=4, horizon=10)
    assert plain.preprocessing == "none"
    assert plain.feature_names == []
    np.testing.assert_array_equal(plain.preprocess(X[:3]), X[:3])


@pytest.mark.parametrize("arguments, named", [
    ({"seed": -1}, "seed must be at least 0, got -1"),
    ({"seed": 2**64}, r"seed must be at most 2\*\*64 - 1"),
    ({"replicate": -2}, "replicate must be at least 0"),
    ({"horizon": -1}, "horizon must be at least 0, got -1"),
    ({"horizon": 10.0}, "horizon must be an integer"),
    ({"n_features": -1}, "n_features must be at least 1, got -1"),
    ({"n_features": 0}, "n_features must be at least 1, got 0"),
    ({"n_features": 2.7}, r"n_features must be an integer, got 2.7 \(float\)"),  # not silently 2
    ({"n_features": "5"}, "n_features must be an integer"),
    ({"task": None}, "task must be a string, got None"),
    ({"backend": 1}, "backend must be a string"),
])
def test_bad_arguments_are_config_errors_naming_the_argument(arguments, named):
    # They used to reach nanobind, whose TypeError ("incompatible function arguments") named neither.
    with pytest.raises(omkl.ConfigError, match=named):
        omkl.Learner(**{"algo": "raker:D=8", "n_features": 4, "horizon": 10, **arguments})
    assert omkl.Learner("raker:D=8", np.int64(4), seed=np.uint64(2**64 - 1), horizon=10).n_features == 4


def test_default_step_without_horizon_says_to_give_horizon():
    with pytest.raises(omkl.ConfigError, match=r"'eta' has no default when the stream length is unknown.*horizon="):
        omkl.Learner("raker", 5)
    assert omkl.Learner("raker", 5, horizon=100).parameters["eta"]
    assert omkl.Learner("raker:eta=0.05", 5).parameters["eta"] == "0.05"
    assert "horizon=" in omkl.Learner.__doc__ and "eta=0.05" in omkl.Learner.__doc__


def test_bad_arrays_are_input_errors_that_say_what_is_wrong(regression_stream):
    X, y = regression_stream
    learner = omkl.Learner("raker:D=8", n_features=4, horizon=300)
    with pytest.raises(omkl.InputError, match=r"y must be 1-D, one target per row; got shape \(3, 1\)"):
        learner.partial_fit(X[:3], y[:3].reshape(3, 1))
    with pytest.raises(omkl.InputError, match="X has complex values"):
        learner.predict(X[:2] + 1j)  # NumPy would only warn and drop the imaginary parts
    with pytest.raises(omkl.InputError, match="y has complex values"):
        learner.partial_fit(X[:2], y[:2] + 0j)
    with pytest.raises(omkl.InputError, match="X: sample 2, feature 3 is not a real number: 'a'"):
        learner.predict([[0.0] * 4, [0.0, 0.0, "a", 0.0]])
    assert learner.n_seen == 0
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X[:3]).astype("Float64")
    frame.iloc[1, 2] = pd.NA
    with pytest.raises(omkl.InputError, match=r"X: sample 2, feature 3 is a missing value \(<NA>\)"):
        learner.predict(frame)
    targets = pd.Series(y[:3]).astype("Float64")
    targets.iloc[2] = pd.NA
    # (pandas turns a float Series' <NA> into nan, which the library names.)
    with pytest.raises(omkl.InputError, match=r"y: target 3 is a missing value|sample 3: target nan"):
        learner.partial_fit(X[:3], targets)
    assert learner.n_seen == 0


def test_dataframe_columns_must_be_the_feature_names_of_a_command_line_model(tmp_path, cli, regression_stream):
    # `omkl predict` refuses a file whose columns are not the model's; from Python, so does the learner.
    pd = pytest.importorskip("pandas")
    X, y = regression_stream
    write_csv(tmp_path / "train.csv", X, y)
    cli("run", "--data", tmp_path / "train.csv", "--algo", "raker:D=8", "--save", tmp_path / "m.ckpt")
    model = omkl.Learner.load(tmp_path / "m.ckpt")
    frame = pd.DataFrame(X[:5], columns=["x0", "x1", "x2", "x3"])
    np.testing.assert_array_equal(model.predict(frame), model.predict(X[:5]))
    assert model.predict_one(frame.iloc[0]) == model.predict(X[:1])[0]  # a row (Series) by its index
    message = (r"X: feature column 1 is 'x3', but the model was trained with 'x0' there "
               r"\(its features, in order: x0, x1, x2, x3\)")
    with pytest.raises(omkl.InputError, match=message):
        model.predict(frame[["x3", "x2", "x1", "x0"]])
    with pytest.raises(omkl.InputError, match=message):
        model.predict_one(frame[["x3", "x2", "x1", "x0"]].iloc[0])
    with pytest.raises(omkl.InputError, match="feature column 2 is 'b'"):
        model.partial_fit(frame.rename(columns={"x1": "b"}), y[:5])
    with pytest.raises(omkl.InputError, match="feature column 4 is 'y'"):
        model.preprocess(frame.rename(columns={"x3": "y"}))
    assert model.n_seen == len(y)
    # Unnamed (integer) columns, and a model without names, are taken by position.
    np.testing.assert_array_equal(model.predict(pd.DataFrame(X[:5])), model.predict(X[:5]))
    unnamed = omkl.Learner("raker:D=8", n_features=4, horizon=10)
    np.testing.assert_array_equal(unnamed.predict(frame[["x3", "x2", "x1", "x0"]]), unnamed.predict(X[:5, ::-1]))


def test_checkpoint_methods_are_documented():
    for method in (omkl.Learner.load, omkl.Learner.from_bytes, omkl.Learner.to_bytes, omkl.Learner.save):
        assert method.__doc__ and len(method.__doc__) > 40, method.__name__
