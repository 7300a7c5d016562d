"""Twenty common ways a secret reaches a handoff's text, each with the part that must never be published."""

from __future__ import annotations

import base64

AWS = "AKIA" + "IOSFODNN7EXAMPLE"
_WRAPPED = base64.b64encode(f"aws_access_key_id={AWS}".encode()).decode()

# name: (text as written, the secret inside it)
FORMS: dict[str, tuple[str, str]] = {
    "aws key id": (f"aws_access_key_id = {AWS}", AWS),
    "aws secret key": ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY", "wJalrXUtnFEMI"),
    "github classic token": ("token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "A1b2C3d4E5f6G7h8"),
    "github fine-grained token": (
        "github_pat_" + "11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
        "11ABCDEFG0123456789abc",
    ),
    "gitlab token": ("glpat-" + "x9Yz8Wv7Ut6Sr5Qp4On3", "x9Yz8Wv7Ut6Sr5Qp4On3"),
    "slack bot token": ("xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
    "slack webhook": (
        "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "XXXXXXXXXXXXXXXXXXXXXXXX",
    ),
    "stripe live key": ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    "openai project key": ("key sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3k", "Ab3dEf6hIj9kLm2n"),
    "anthropic key": ("sk-ant-api03-" + "Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg-Hj_KlLkJhGfDsAqW", "Zx9Cv8Bn7Mq6Wr5E"),
    "google api key": ("maps key AIza" + "SyD1e2F3g4H5i6J7k8L9m0NoPqRsTuVwXyZ", "SyD1e2F3g4H5i6J7"),
    "jwt": (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
        + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    ),
    "private key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "q7BFUFk\n-----END RSA PRIVATE KEY-----",
        "q7BFUFk",
    ),
    "credentials in url": ("DATABASE_URL=postgres://app:Sup3r" + "S3cret@db.internal:5432/app", "Sup3rS3cret"),
    "yaml password": ("config:\n  db:\n    password: hunter2" + "correcthorse", "hunter2correcthorse"),
    "quoted password": ('password = "hunter2' + 'hunter2"', "hunter2hunter2"),
    "npm token": ("//registry.npmjs.org/:_authToken=npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8"),
    "sendgrid key": ("SG." + "ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr", "TwL2iGABf9DHoTf"),
    "shell export": ("export API_KEY=" + "d41c8f9e2b7a6f3e1c0b9a8d7e6f5a4b", "d41c8f9e2b7a6f3e1c0b9a8d7e6f5a4b"),
    "base64-wrapped aws key": (f"echo {_WRAPPED} | base64 -d", _WRAPPED),
}
