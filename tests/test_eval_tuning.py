"""The evaluations' tuned search: with the default tuning it is ``Memory.search`` with its
defaults, so what an evaluation scores is what ``ramem search`` returns (real MiniLM)."""

from __future__ import annotations

import pytest

from ramem_local import Memory
from ramem_local.eval.tuning import SearchTuning, tuned_search

ENTRIES = (
    ("2024-02-03 10:00", "Hiked up Eagle Ridge with Ana; the view from the top was clear."),
    ("2024-02-10 18:00", "Cooked shakshuka for Ben and Chloe."),
    ("2024-02-17 11:00", "Hiked around Pine Lake alone; it was muddy all the way up."),
    ("2024-02-24 19:00", "Watched the film Arrival at the Old Theatre with Hugo."),
    ("2024-03-02 18:30", "Cooked shakshuka again, this time with extra feta."),
    ("2024-03-04 09:00", "Started reading the book Piranesi that Ana lent me."),
    ("2024-03-09 10:00", "Hiked up Hawk Hill with David and Elena."),
    ("2024-03-10 20:00", "Cooked a mushroom risotto for Grace."),
    ("2024-03-12 12:00", "Adopted a grey cat from the shelter and named her Pixel."),
    ("2024-03-13 19:00", "Cooked a big pot of ramen."),
    ("2024-03-16 10:00", "Hiked the coastal path with Ana."),
    ("2024-03-17 18:00", "Fixed the leaking kitchen tap."),
    ("2024-03-19 19:00", "Watched the film Dune at the Blue Room with Leo."),
)
AS_OF = "2024-03-20 23:00"
QUESTIONS = (
    "What did I cook on 10 March 2024?",  # a date
    "Where did I hike last weekend?",  # relative to as_of
    "When did I last cook shakshuka?",  # an order
    "How many times did I go hiking in February 2024?",  # a count
    "What did I cook the day after I adopted Pixel?",  # another event's time
    "Which book did Ana lend me?",  # no time at all
)


def ranked(response) -> list[tuple[int, float, str]]:
    return [(c.memory.id, c.score, c.list_name) for c in response.results]


@pytest.mark.real_model
def test_the_default_tuning_searches_as_memory_search_does(tmp_path, minilm_dir):
    with Memory.open(tmp_path / "journal.db", embedder=minilm_dir, country="US") as memory:
        for at, text in ENTRIES:
            memory.add(text, at=at)
        for question in QUESTIONS:
            for mode in ("ramem", "baseline"):
                for k in (10, 25):  # the journal's K, and the depth LoCoMo scores at
                    tuned = tuned_search(memory, question, k=k, mode=mode,
                                         tuning=SearchTuning(), as_of=AS_OF)
                    plain = memory.search(question, k=k, mode=mode, as_of=AS_OF)
                    where = f"{question!r} {mode} k={k}"
                    assert tuned.results, where
                    assert ranked(tuned) == ranked(plain), where
                    assert tuned.count == plain.count, where
        dated = memory.search(QUESTIONS[0], as_of=AS_OF)
        assert "risotto" in dated.results[0].memory.content  # the bank answers: not vacuous


@pytest.mark.real_model
def test_a_tuning_choice_changes_the_search(tmp_path, minilm_dir):
    """The equality above is not the tuning being ignored: a frame choice (no buffer) and a
    settings choice (no multi-step) each change what the tuned search returns."""
    with Memory.open(tmp_path / "journal.db", embedder=minilm_dir, country="US") as memory:
        for at, text in ENTRIES:
            memory.add(text, at=at)
        question = "How many times did I go hiking in February 2024?"
        default = tuned_search(memory, question, k=10, mode="ramem", tuning=SearchTuning(),
                               as_of=AS_OF)
        no_steps = tuned_search(memory, question, k=10, mode="ramem",
                                tuning=SearchTuning(multi_step=False), as_of=AS_OF)
        assert default.count is not None and no_steps.count is None
        narrow = SearchTuning(buffer_days=0).frame(memory, "What did I cook on 10 March 2024?",
                                                   mode="ramem", as_of=AS_OF)
        wide = SearchTuning().frame(memory, "What did I cook on 10 March 2024?",
                                    mode="ramem", as_of=AS_OF)
        assert narrow.time_range == wide.time_range
        assert narrow.widened_range != wide.widened_range


def test_the_default_recently_window_is_the_one_memory_frame_uses():
    import inspect

    frame_default = inspect.signature(Memory.frame).parameters["recent_days"].default
    assert SearchTuning().recent_days == frame_default


def test_reading_the_count_kind_from_neighbourhoods_is_a_tuning_the_header_names():
    tuned = SearchTuning(kind_neighbourhood=0.1)
    assert tuned.retrieval_settings(k=10, mode="ramem").kind_neighbourhood == 0.1
    assert "count kind read from the closest 0.1 of pairs" in tuned.describe()
    assert "each report alone" in SearchTuning(kind_neighbourhood=0).describe()
    default = SearchTuning()
    assert default.retrieval_settings(k=10, mode="ramem").kind_neighbourhood == 0.05
    assert "count kind" not in default.describe()


def test_range_feedback_is_on_by_default_and_the_header_names_it_off():
    alone = SearchTuning(range_feedback=False)
    assert alone.retrieval_settings(k=10, mode="ramem").range_feedback is False
    assert "the question alone inside a range" in alone.describe()
    assert SearchTuning().retrieval_settings(k=10, mode="ramem").range_feedback is True
    assert "inside a range" not in SearchTuning().describe()


def test_counting_by_the_counted_reports_verbs_is_a_tuning_the_header_names():
    off = SearchTuning(count_by_verbs=False)
    assert off.retrieval_settings(k=10, mode="ramem").count_by_verbs is False
    assert "counts without the counted reports' verbs" in off.describe()
    default = SearchTuning()
    assert default.retrieval_settings(k=10, mode="ramem").count_by_verbs is True
    assert "verbs" not in default.describe()
