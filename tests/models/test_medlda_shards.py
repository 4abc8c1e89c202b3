"""MedLDA(sampler="ssgrld", chain_method="dask"): the documents sharded over 2 Dask workers,
the topics and the classifier travelling between them.

The corpus is test_medlda.py's (drawn from the model: 600 training and 400 test documents,
K = 5, V = 200), where one process's SSGRLD recovers the topics to 0.10-0.12 (mean L1 after
matching; random topics lie 1.7-1.9 away) and scores 0.96-0.98."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from regbayes.algorithms import medlda_shards
from regbayes.datasets.topic_corpus import make_topic_corpus
from regbayes.models.medlda import MedLDA

pytest.importorskip("distributed")

K = 5
COMMON = dict(n_topics=K, alpha=0.1, beta=0.05, C=10.0, random_state=0, sampler="ssgrld", n_iter=150, batch_size=50)


@pytest.fixture(scope="module")
def corpus():
    X, y, phi, _ = make_topic_corpus(n_docs=1000, n_topics=K, n_words=200, doc_length=50, random_state=0)
    return X[:600], y[:600], X[600:], y[600:], phi


def matched_topic_distance(topics, truth):
    cost = np.abs(topics[:, None, :] - truth[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(cost)
    return cost[rows, cols].mean()


def test_sharded_fit_recovers_topics_and_labels_as_one_process(client, corpus):
    """Two shards of 300 documents, taking turns, trajectories of 6 iterations (a pass over a shard):
    the topics within 0.2 of the truth and the test accuracy at least 0.93, the thresholds
    of the one-process test; the same seed gives the same fit."""
    Xtr, ytr, Xte, yte, phi = corpus
    model = MedLDA(chain_method="dask", **COMMON).fit(Xtr, ytr)
    assert model.trace_["shard_documents"] == [300, 300]
    assert model.trace_["trajectory_iterations"] == [6, 6]
    assert model.n_iter_ == 150 and model.trace_["iteration"][-1] == 150
    np.testing.assert_array_equal(model.trace_["n_docs"], 50 * model.trace_["iteration"])
    np.testing.assert_array_equal(model.trace_["shard"], np.arange(25) % 2)
    assert model.topic_word_samples_.shape == (5, K, 200)
    assert matched_topic_distance(model.components_, phi) < 0.2
    assert model.score(Xte, yte) >= 0.93
    again = MedLDA(chain_method="dask", **COMMON).fit(Xtr, ytr)
    np.testing.assert_array_equal(model.components_, again.components_)
    np.testing.assert_array_equal(model.coef_samples_, again.coef_samples_)


def test_sharded_fit_reads_svmlight_files_on_the_workers(client, corpus, tmp_path):
    """Six svmlight files, three per worker; an empty document is dropped with a warning."""
    from sklearn.datasets import dump_svmlight_file

    Xtr, ytr, Xte, yte, _ = corpus
    Xtr = sp.lil_matrix(Xtr)
    Xtr[7] = 0
    Xtr[0, 199] += 1  # the files' width is their largest word index: the vocabulary's last word appears
    Xtr = Xtr.tocsr()
    for i, rows in enumerate(np.array_split(np.arange(600), 6)):
        dump_svmlight_file(Xtr[rows], ytr[rows], str(tmp_path / f"part{i}.svm"), zero_based=True)
    with pytest.warns(UserWarning, match="1 empty documents"):
        model = MedLDA(chain_method="dask", refit_classifier=False, **COMMON).fit(str(tmp_path / "*.svm"), None)
    assert model.trace_["shard_documents"] == [299, 300]
    assert model.components_.shape == (K, 200)
    assert model.score(Xte, yte) >= 0.9


def test_a_block_that_holds_no_counts_is_named(client, corpus, tmp_path):
    from sklearn.datasets import dump_svmlight_file

    Xtr, ytr, *_ = corpus
    X = Xtr[:200].toarray().astype(np.float64)
    X[150, 3] = 0.5
    dump_svmlight_file(X[:100], ytr[:100], str(tmp_path / "a.svm"), zero_based=True)
    dump_svmlight_file(X[100:], ytr[100:200], str(tmp_path / "b.svm"), zero_based=True)
    with pytest.raises(ValueError, match=r"b\.svm.*non-integer counts"):
        MedLDA(chain_method="dask", **COMMON).fit(str(tmp_path / "*.svm"), None)


def test_sharded_bad_settings(client, corpus, tmp_path):
    Xtr, ytr, *_ = corpus
    with pytest.raises(ValueError, match="sampler='ssgrld'"):
        MedLDA(chain_method="dask", **dict(COMMON, sampler="gibbs")).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="checkpoint"):
        MedLDA(chain_method="dask", checkpoint=str(tmp_path / "c"), **COMMON).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="batch_size=400"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            MedLDA(chain_method="dask", **dict(COMMON, batch_size=400)).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="chain_method"):
        MedLDA(chain_method="threads", **COMMON).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="read block by block.*chain_method='dask'"):
        MedLDA(**COMMON).fit(str(tmp_path / "*.svm"), None)


def test_shard_trajectory_is_algorithm_1_on_its_documents(corpus):
    """In this process: a shard's trajectory from a travelling state runs the iterations of
    medlda_ssgrld.step with the same seeds, scaled to the corpus' documents."""
    from regbayes import schedules
    from regbayes.algorithms import medlda_ssgrld

    Xtr, ytr, *_ = corpus
    counts = sp.csr_matrix(Xtr, dtype=np.int64)[:300]
    codes = np.asarray(ytr[:300], np.int64)
    y_sign = (2.0 * codes - 1.0)[:, None]
    settings = dict(crammer_singer=False, n_topics=K, n_words=200, alpha=0.1, beta=0.05, C=10.0, margin=1.0,
                    prior_scale=1.0, batch_size=50, n_inner_sweeps=4, n_inner_burnin=2, soft_from=2,
                    topic_step=schedules.polynomial(0.05, b=100, gamma=0.55), classifier_step=schedules.as_schedule(0.5),
                    n_jobs=1)
    shard = medlda_shards.TopicShard(counts, codes, y_sign, seed=3)
    shard.start(settings, n_total=600)
    assert shard.data.scale == 600 / 50
    z0 = shard.z.copy()
    start = medlda_shards.initial_state(1, K, 200, 0.05, 1, False)
    out = shard.trajectory([11, 12, 13], start, average_from=1, keep=[2])
    data = medlda_ssgrld.make_data(shard.doc_ptr, shard.words, y_sign, codes, n_total=600, **settings)
    state = start._replace(z=z0)
    phis = []
    for seed in (11, 12, 13):
        state, _ = medlda_ssgrld.step(seed, state, data)
        phis.append(medlda_ssgrld.topic_word(state))
    np.testing.assert_array_equal(out.state.theta, state.theta)
    np.testing.assert_array_equal(out.state.eta, state.eta)
    assert out.state.iteration == 3 and out.n_summed == 2 and [t for t, _, _ in out.kept] == [2]
    np.testing.assert_allclose(out.phi_sum, phis[1] + phis[2])


def test_trajectories_are_proportional_to_the_shards():
    from regbayes.models.medlda_shards import TRAJECTORY_ITERATIONS, trajectory_lengths

    np.testing.assert_array_equal(trajectory_lengths([6000, 6000], 100), [TRAJECTORY_ITERATIONS] * 2)
    np.testing.assert_array_equal(trajectory_lengths([4000, 8000], 100), [7, 14])  # 10 x 4/6, twice that
    np.testing.assert_array_equal(trajectory_lengths([300, 300], 50), [6, 6])  # a pass over a shard
    np.testing.assert_array_equal(trajectory_lengths([100, 5000], 100), [1, 50])


def test_cli_fits_medlda_on_the_workers(client, corpus, tmp_path, capsys):
    """``regbayes fit "DIR/*.svm" --model medlda --scheduler ADDRESS``: the workers read the
    files; without --scheduler such data are refused for MedLDA."""
    from sklearn.datasets import dump_svmlight_file

    from regbayes import cli, load

    Xtr, ytr, *_ = corpus
    for i, rows in enumerate(np.array_split(np.arange(600), 4)):
        dump_svmlight_file(Xtr[rows], ytr[rows], str(tmp_path / f"part{i}.svm"), zero_based=True)
    params = ["--param", "n_topics=5", "--param", "n_iter=30", "--param", "batch_size=50", "--param", "C=10"]
    out = tmp_path / "m.npz"
    command = ["fit", str(tmp_path / "*.svm"), "--model", "medlda", "--model-out", str(out), "--no-progress", *params]
    assert cli.main([*command, "--scheduler", client.scheduler.address]) == 0
    assert "600 documents in 2 shards on Dask workers" in capsys.readouterr().out
    assert load(out).components_.shape[0] == 5
    assert cli.main(command) == 2
    assert "--model medlda on Dask workers (--scheduler)" in capsys.readouterr().err


def test_a_lost_worker_is_a_clear_error():
    """The shards hold the topic assignments: a call to a lost worker's shard ends the fit
    with a ClusterError that says so (no partial result)."""
    from distributed.comm import CommClosedError

    from regbayes.inference.distributed import ClusterError
    from regbayes.models.medlda_shards import _result

    class Lost:
        def result(self):
            raise CommClosedError("in <TCP (closed)>: Stream is closed")

    with pytest.raises(ClusterError, match="holding a shard of the documents was lost"):
        _result(Lost())
