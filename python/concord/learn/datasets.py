"""Readers for the data sets of the experiments: MULAN's multilabel ARFF
files and CoNLL-U treebanks."""

import os
import re

import numpy as np

__all__ = ["load_mulan", "load_mulan_split", "load_conllu"]


def load_mulan(arff_path, xml_path):
    """A MULAN multilabel data set: the ARFF file (dense or sparse rows) and
    the XML file naming its labels. Returns (X (n, n_features) float64, Y
    (n, n_labels) int 0/1, label names), features in the file's order
    without the label attributes."""
    with open(xml_path, encoding="utf-8") as xml:
        label_names = re.findall(r'<label\s+name="([^"]*)"', xml.read())
    attributes, rows = [], []
    with open(arff_path, encoding="utf-8") as arff:
        for line in arff:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            lower = line.lower()
            if lower.startswith("@attribute"):
                attributes.append(_attribute_name(line))
            elif lower.startswith("@data"):
                break
        values = np.zeros(0)
        for line in arff:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            values = np.zeros(len(attributes))
            if line.startswith("{"):
                for entry in line.strip("{}").split(","):
                    if entry.strip():
                        index, value = entry.split()
                        values[int(index)] = float(value)
            else:
                values[:] = [float(v) for v in line.split(",")]
            rows.append(values)
    table = np.array(rows).reshape(len(rows), len(attributes))
    position = {name: k for k, name in enumerate(attributes)}
    missing = [name for name in label_names if name not in position]
    if missing or not label_names:
        raise ValueError("%s: labels of %s not among its attributes: %s"
                         % (arff_path, xml_path, missing[:3]))
    label_columns = [position[name] for name in label_names]
    features = np.setdiff1d(np.arange(len(attributes)), label_columns)
    return table[:, features], table[:, label_columns].astype(int), label_names


def load_mulan_split(folder, name):
    """MULAN's train/test split of the data set `name` in `folder`
    (name-train.arff, name-test.arff, name.xml). Returns ((X, Y), (X_test,
    Y_test)) as load_mulan reads them; a missing file raises
    FileNotFoundError naming it."""
    train, test, xml = (os.path.join(folder, name + suffix)
                        for suffix in ("-train.arff", "-test.arff", ".xml"))
    for path in (train, test, xml):
        if not os.path.exists(path):
            raise FileNotFoundError(2, "not found", path)
    X, Y, _ = load_mulan(train, xml)
    X_test, Y_test, _ = load_mulan(test, xml)
    return (X, Y), (X_test, Y_test)


def _attribute_name(line):
    """The name in '@attribute name type' (quoted names may hold spaces)."""
    rest = line.split(None, 1)[1]
    if rest[0] in "'\"":
        return rest[1:rest.index(rest[0], 1)]
    return rest.split()[0]


def load_conllu(path):
    """The sentences of a CoNLL-U file as (words, universal POS tags) pairs
    of lists (multiword-token ranges and empty nodes skipped)."""
    sentences, words, tags = [], [], []
    with open(path, encoding="utf-8") as conllu:
        for line in conllu:
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append((words, tags))
                words, tags = [], []
            elif not line.startswith("#"):
                columns = line.split("\t")
                if "-" in columns[0] or "." in columns[0]:
                    continue
                words.append(columns[1])
                tags.append(columns[3])
    if words:
        sentences.append((words, tags))
    return sentences
