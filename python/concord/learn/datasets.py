"""Readers for the data sets of the experiments: MULAN's multilabel ARFF
files and CoNLL-U treebanks."""

import os
import xml.etree.ElementTree as ElementTree

import numpy as np

__all__ = ["load_mulan", "load_mulan_split", "load_conllu"]


def load_mulan(arff_path, xml_path):
    """A MULAN multilabel data set: the ARFF file (dense or sparse rows) and
    the XML file naming its labels. Returns (X (n, n_features) float64, Y
    (n, n_labels) int 0/1, label names), features in the file's order
    without the label attributes. An @attribute line without a name, a row
    that is not finite numbers (a missing value "?" included), of the wrong
    number of values or with a label other than 0 or 1 is a ValueError
    naming its line. The labels are the XML file's <label name="...">
    elements (in any namespace, nested too), in document order."""
    try:
        root = ElementTree.parse(xml_path).getroot()
    except ElementTree.ParseError as error:
        raise ValueError("%s: not XML (%s)" % (xml_path, error)) from None
    label_names = [element.get("name") for element in root.iter()
                   if element.tag.rsplit("}", 1)[-1] == "label" and element.get("name")]
    if not label_names:
        raise ValueError('%s: no <label name="..."> element' % xml_path)
    attributes, rows, numbers = [], [], []
    with open(arff_path, encoding="utf-8") as arff:
        lines = enumerate(arff, 1)
        for number, line in lines:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            lower = line.lower()
            if lower.startswith("@attribute"):
                try:
                    attributes.append(_attribute_name(line))
                except ValueError as error:
                    raise ValueError("%s:%d: %s" % (arff_path, number, error)) from None
            elif lower.startswith("@data"):
                break
        for number, line in lines:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            try:
                rows.append(_arff_row(line, len(attributes)))
            except ValueError as error:
                raise ValueError("%s:%d: %s" % (arff_path, number, error)) from None
            numbers.append(number)
    table = np.array(rows).reshape(len(rows), len(attributes))
    position = {name: k for k, name in enumerate(attributes)}
    missing = [name for name in label_names if name not in position]
    if missing:
        raise ValueError("%s: labels of %s not among its attributes: %s"
                         % (arff_path, xml_path, missing[:3]))
    label_columns = [position[name] for name in label_names]
    labels = table[:, label_columns]
    bad = np.flatnonzero(~np.isin(labels, (0, 1)).all(axis=1))
    if len(bad):
        raise ValueError("%s:%d: labels must be 0 or 1, got %s"
                         % (arff_path, numbers[bad[0]], labels[bad[0]]))
    features = np.setdiff1d(np.arange(len(attributes)), label_columns)
    return table[:, features], labels.astype(int), label_names


def _arff_row(line, count):
    """The `count` values of an ARFF data row, dense ("1,0,2.5") or sparse
    ("{0 1,3 2.5}": index value pairs, the others 0)."""
    values = np.zeros(count)
    if line.startswith("{"):
        for entry in line.strip("{}").split(","):
            if entry.strip():
                index, value = entry.split()
                if not 0 <= int(index) < count:
                    raise ValueError("attribute index %s out of range (%d attributes)"
                                     % (index, count))
                values[int(index)] = float(value)
    else:
        given = line.split(",")
        if len(given) != count:
            raise ValueError("%d values for %d attributes" % (len(given), count))
        values[:] = [float(v) for v in given]
    if not np.isfinite(values).all():
        raise ValueError("a value that is not finite: %s" % values[~np.isfinite(values)][0])
    return values


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
    """The name in '@attribute name type' (quoted names may hold spaces);
    ValueError when there is none or its quote is not closed."""
    parts = line.split(None, 1)
    if len(parts) < 2:
        raise ValueError("an @attribute line without a name")
    rest = parts[1]
    if rest[0] in "'\"":
        end = rest.find(rest[0], 1)
        if end < 0:
            raise ValueError("the quoted @attribute name %s is not closed" % rest)
        return rest[1:end]
    return rest.split()[0]


def load_conllu(path):
    """The sentences of a CoNLL-U file as (words, universal POS tags) pairs
    of lists (multiword-token ranges and empty nodes skipped). A token line
    of fewer than 4 tab-separated columns is a ValueError naming it."""
    sentences, words, tags = [], [], []
    with open(path, encoding="utf-8") as conllu:
        for number, line in enumerate(conllu, 1):
            line = line.rstrip("\n")
            if not line:
                if words:
                    sentences.append((words, tags))
                words, tags = [], []
            elif not line.startswith("#"):
                columns = line.split("\t")
                if len(columns) < 4:
                    raise ValueError("%s:%d: a token line of %d tab-separated columns (10 "
                                     "expected)" % (path, number, len(columns)))
                if "-" in columns[0] or "." in columns[0]:
                    continue
                words.append(columns[1])
                tags.append(columns[3])
    if words:
        sentences.append((words, tags))
    return sentences
