"""Recall: temporal cues and the recall frame of a question."""

from .time import detect_cues, has_temporal_cue, question_range

__all__ = ["detect_cues", "has_temporal_cue", "question_range"]
