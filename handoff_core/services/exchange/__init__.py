"""The external-web exchange: sealed outbound packages and returns judged whole."""
