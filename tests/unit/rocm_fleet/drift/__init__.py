# A package, so these test modules cannot clash with same-named tests elsewhere.
