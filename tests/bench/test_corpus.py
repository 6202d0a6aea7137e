"""The corpus location is one setting, ``LAWDESK_CORPUS``, resolved against the repository wherever it is read."""

from bench.corpus import REPO, corpus_dir


def test_the_default_is_the_shared_folder_beside_the_repository():
    assert corpus_dir({}) == REPO.parent / "shared" / "corpus"


def test_a_relative_setting_is_taken_from_the_repository_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert corpus_dir({"LAWDESK_CORPUS": "../elsewhere/corpus"}) == REPO.parent / "elsewhere" / "corpus"


def test_an_absolute_setting_is_used_as_it_is(tmp_path):
    assert corpus_dir({"LAWDESK_CORPUS": str(tmp_path)}) == tmp_path.resolve()


def test_an_empty_setting_means_the_default():
    assert corpus_dir({"LAWDESK_CORPUS": ""}) == corpus_dir({})
