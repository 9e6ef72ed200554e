#!/usr/bin/env python3
"""Writes the small learning data sets of tests/data/learn from fixed seeds
(running it again rewrites the same bytes):

- multilabel-{train,test}.arff, multilabel.xml: a MULAN-style multilabel
  set in sparse ARFF (24 binary word features, 6 labels, the labels last).
  Each document draws one or two of four topics; a topic switches on its
  labels (labels are correlated through topics) and makes some words more
  likely.
- pos-{train,test}.conllu: sentences of a toy English grammar tagged with
  universal POS tags, in CoNLL-U (with a comment line per sentence and an
  occasional multiword token range, which readers skip). Some words take
  two tags ("run", "book", "that", ...), so context decides.

usage: scripts/gen-learn-data.py [output directory, default tests/data/learn]
"""
import os
import sys

import numpy as np

TOPIC_LABELS = [[0, 1], [1, 2], [3, 4], [4, 5]]
FEATURES, LABELS = 24, 6

DETERMINERS = ["the", "a", "that", "every"]
ADJECTIVES = ["red", "old", "quick", "small", "happy"]
NOUNS = ["dog", "book", "run", "park", "cat", "idea", "walk", "table"]
VERBS = ["run", "book", "walk", "saw", "likes", "reads", "found"]
PRONOUNS = ["she", "he", "they", "that", "it"]
ADPOSITIONS = ["in", "on", "near", "with"]


def multilabel(rng, count):
    """Rows of (active feature indices, label indicators)."""
    rows = []
    for _ in range(count):
        topics = rng.choice(4, size=int(rng.integers(1, 3)), replace=False)
        labels = np.zeros(LABELS, dtype=int)
        probability = np.full(FEATURES, 0.08)
        for topic in topics:
            labels[TOPIC_LABELS[topic]] = 1
            probability[6 * topic:6 * topic + 6] = 0.55
        if rng.random() < 0.1:          # label noise
            labels[int(rng.integers(LABELS))] ^= 1
        words = np.flatnonzero(rng.random(FEATURES) < probability)
        rows.append((words, labels))
    return rows


def write_arff(path, rows):
    """Writes rows of multilabel() as sparse ARFF: the word features, then the labels."""
    with open(path, "w") as out:
        out.write("@relation toy_multilabel\n\n")
        for k in range(FEATURES):
            out.write("@attribute word%d {0,1}\n" % k)
        for k in range(LABELS):
            out.write("@attribute label%d {0,1}\n" % k)
        out.write("\n@data\n")
        for words, labels in rows:
            entries = ["%d 1" % w for w in words]
            entries += ["%d 1" % (FEATURES + k) for k in np.flatnonzero(labels)]
            out.write("{%s}\n" % ",".join(entries))


def write_xml(path):
    """Writes the MULAN XML file naming the labels."""
    with open(path, "w") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n')
        out.write('<labels xmlns="http://mulan.sourceforge.net/labels">\n')
        for k in range(LABELS):
            out.write('<label name="label%d"></label>\n' % k)
        out.write("</labels>\n")


def noun_phrase(rng):
    """(word, tag) pairs of a determiner, sometimes an adjective, and a noun."""
    words = [(str(rng.choice(DETERMINERS)), "DET")]
    if rng.random() < 0.4:
        words.append((str(rng.choice(ADJECTIVES)), "ADJ"))
    words.append((str(rng.choice(NOUNS)), "NOUN"))
    return words


def sentence(rng):
    """(word, tag) pairs of a sentence: a pronoun or a noun phrase, a verb, a noun phrase,
    sometimes a prepositional phrase, and a full stop."""
    subject = ([(str(rng.choice(PRONOUNS)), "PRON")] if rng.random() < 0.4
               else noun_phrase(rng))
    words = subject + [(str(rng.choice(VERBS)), "VERB")] + noun_phrase(rng)
    if rng.random() < 0.5:
        words += [(str(rng.choice(ADPOSITIONS)), "ADP")] + noun_phrase(rng)
    return words + [(".", "PUNCT")]


def write_conllu(path, rng, count):
    """Writes count sentences in CoNLL-U, one in seven (the first, the eighth, ...) with a
    multiword token range over its first two words."""
    with open(path, "w") as out:
        for s in range(count):
            words = sentence(rng)
            out.write("# sent_id = toy-%d\n" % (s + 1))
            out.write("# text = %s\n" % " ".join(w for w, _ in words))
            if s % 7 == 0:
                out.write("1-2\t%s%s\t_\t_\t_\t_\t_\t_\t_\t_\n" % (words[0][0], words[1][0]))
            for i, (word, tag) in enumerate(words, 1):
                out.write("%d\t%s\t%s\t%s\t_\t_\t%d\tdep\t_\t_\n" % (i, word, word, tag, i - 1))
            out.write("\n")


def main():
    """Writes the data sets to the output directory."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "data", "learn")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(20240601)
    write_arff(os.path.join(folder, "multilabel-train.arff"), multilabel(rng, 160))
    write_arff(os.path.join(folder, "multilabel-test.arff"), multilabel(rng, 80))
    write_xml(os.path.join(folder, "multilabel.xml"))
    write_conllu(os.path.join(folder, "pos-train.conllu"), rng, 60)
    write_conllu(os.path.join(folder, "pos-test.conllu"), rng, 40)


if __name__ == "__main__":
    main()
