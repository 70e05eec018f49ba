"""OMKLRegressor / OMKLClassifier: scikit-learn estimators over the online learners."""
import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import omkl
from conftest import read_predictions, shared_file, write_csv


@parametrize_with_checks([omkl.OMKLRegressor(algo="raker:D=8"), omkl.OMKLClassifier(algo="raker:D=8")])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_regressor_partial_fit_gives_the_command_line_predictions_on_airfoil(tmp_path, cli):
    # The acceptance of the Python package (issue 18): the shared Airfoil data, same algorithm
    # and seed as `omkl run`.
    path = shared_file("airfoil.csv")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1]
    cli("run", "--data", path, "--algo", "raker", "--seed", 3, "--predictions", tmp_path / "p.csv")
    model = omkl.OMKLRegressor(algo="raker", seed=3).partial_fit(X, y)
    np.testing.assert_array_equal(model.online_predictions_, read_predictions(tmp_path / "p.csv"))


def test_partial_fit_continues_where_fit_restarts(regression_stream):
    X, y = regression_stream
    whole = omkl.OMKLRegressor(algo="raker:D=8", seed=1, horizon=300).fit(X, y)
    parts = omkl.OMKLRegressor(algo="raker:D=8", seed=1, horizon=300)
    parts.partial_fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    np.testing.assert_array_equal(parts.predict(X[:20]), whole.predict(X[:20]))
    assert parts.learner_.n_seen == 300
    refit = clone(whole).fit(X, y)
    np.testing.assert_array_equal(refit.predict(X[:20]), whole.predict(X[:20]))  # same seed, same numbers
    restored = pickle.loads(pickle.dumps(whole))
    np.testing.assert_array_equal(restored.predict(X[:20]), whole.predict(X[:20]))
    assert whole.get_params()["algo"] == "raker:D=8"
    assert whole.set_params(seed=9).seed == 9


def test_river_style_learn_one_and_predict_one(regression_stream):
    X, y = regression_stream
    river = omkl.OMKLRegressor(algo="raker:D=8", horizon=300)
    for row, target in zip(X[:50], y[:50]):
        river.learn_one({f"f{j}": v for j, v in enumerate(row)}, target)
    batch = omkl.OMKLRegressor(algo="raker:D=8", horizon=300).partial_fit(X[:50], y[:50])
    x_next = {f"f{j}": v for j, v in enumerate(X[50])}
    assert river.predict_one(x_next) == batch.predict(X[50:51])[0]
    # Keys are matched by name, whatever their order.
    assert river.predict_one(dict(reversed(list(x_next.items())))) == river.predict_one(x_next)
    with pytest.raises(ValueError, match="features"):
        river.predict_one({"f0": 1.0})
    # Sample by sample from the start there is no stream length for the default step.
    with pytest.raises(omkl.ConfigError, match="eta"):
        omkl.OMKLRegressor(algo="raker:D=8").learn_one({"a": 1.0}, 0.5)
    stepped = omkl.OMKLRegressor(algo="raker:D=8,eta=0.05").learn_one({"a": 1.0}, 0.5)
    assert stepped.learner_.n_seen == 1


def test_classifier_maps_any_two_labels_and_goes_one_vs_rest_beyond(classification_stream):
    X, y = classification_stream
    labels = np.where(y > 0, "spam", "ham")
    model = omkl.OMKLClassifier(algo="raker:D=16", seed=2).fit(X, labels)
    assert list(model.classes_) == ["ham", "spam"]
    # The learner saw -1 for "ham" and +1 for "spam": the same scores as on the ±1 stream.
    plain = omkl.Learner("raker:D=16", n_features=3, task="classification", seed=2, horizon=300)
    np.testing.assert_array_equal(model.online_predictions_, plain.partial_fit(X, y))
    assert model.score(X, labels) > 0.7
    three = np.where(X[:, 2] > 0.8, "other", labels)
    multi = omkl.OMKLClassifier(algo="raker:D=16").fit(X, three)
    assert multi.decision_function(X[:4]).shape == (4, 3) and set(multi.predict(X)) <= {"ham", "other", "spam"}
    with pytest.raises(ValueError, match="one class"):
        omkl.OMKLClassifier().fit(X[:5], ["a"] * 5)
    streaming = omkl.OMKLClassifier(algo="raker:D=16", horizon=300)
    streaming.partial_fit(X[:1], labels[:1], classes=["ham", "spam"])
    with pytest.raises(ValueError, match="not one of the classes"):
        streaming.partial_fit(X[1:2], ["eggs"])


def test_classifier_keeps_dataframe_feature_names(classification_stream):
    # fit once validated the rows twice, the second time (an array by then) wiping the names.
    pd = pytest.importorskip("pandas")
    X, y = classification_stream
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = omkl.OMKLClassifier(algo="raker:D=16").fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="same order"):
        model.predict(frame[["c", "b", "a"]])
    regressor = omkl.OMKLRegressor(algo="raker:D=8").fit(frame, X[:, 0])
    with pytest.raises(ValueError, match="same order"):
        regressor.predict(frame[["c", "b", "a"]])


def test_dict_samples_follow_the_names_fitted_from_a_dataframe(regression_stream):
    import warnings

    pd = pytest.importorskip("pandas")
    X, y = regression_stream
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = omkl.OMKLRegressor(algo="raker:D=8").fit(frame, y)
    sample = dict(zip("abcd", X[0]))
    reordered = {k: sample[k] for k in "dcba"}  # the first dict's order no longer decides
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names" either
        assert model.predict_one(reordered) == model.predict_one(sample) == model.predict(frame.iloc[:1])[0]
    with pytest.raises(omkl.InputError, match=r"missing \['d'\].*the model's features are \['a', 'b', 'c', 'd'\]"):
        model.predict_one({"a": 1.0, "b": 2.0, "c": 3.0})
    with pytest.raises(omkl.InputError, match=r"unknown \['z'\]"):
        model.learn_one({**sample, "z": 1.0}, 0.5)
    twin = clone(model).fit(frame, y)
    model.learn_one(reordered, 0.5)
    twin.partial_fit(frame.iloc[:1], [0.5])
    assert model.predict_one(sample) == twin.predict(frame.iloc[:1])[0]
    labels = np.where(y > 0, "up", "down")
    classifier = omkl.OMKLClassifier(algo="raker:D=8").fit(frame, labels)
    assert classifier.predict_one(reordered) == classifier.predict(frame.iloc[:1])[0]


def test_classifier_partial_fit_refuses_other_classes_later(classification_stream):
    X, y = classification_stream
    model = omkl.OMKLClassifier(algo="raker:D=8", horizon=300)
    model.partial_fit(X[:10], y[:10], classes=[-1, 1])
    model.partial_fit(X[10:20], y[10:20], classes=[1, -1])  # the same classes, in any order
    with pytest.raises(ValueError, match=r"classes=\['a', 'b'\] is not the same as on the first call"):
        model.partial_fit(X[20:30], y[20:30], classes=["a", "b"])
    assert list(model.classes_) == [-1, 1] and model.learner_.n_seen == 20


def test_estimator_parameters_are_checked_before_the_library(regression_stream):
    X, y = regression_stream
    with pytest.raises(omkl.ConfigError, match="horizon must be an integer"):
        omkl.OMKLRegressor(algo="raker:D=8", horizon=2.5).fit(X, y)
    with pytest.raises(omkl.ConfigError, match="seed must be at least 0"):
        omkl.OMKLRegressor(algo="raker:D=8", seed=-1).fit(X, y)
