"""The bundled derivations (installed as sdpa_proofs.catalogue): one claim per file, each a
runnable proof script; files whose names start with _ are helpers, not derivations."""
