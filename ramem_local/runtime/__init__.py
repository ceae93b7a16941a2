"""In-process model runtimes (ONNX embedder; the LLM runtime lives beside it)."""
