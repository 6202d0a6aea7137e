"""The TLS mode: uvicorn serves HTTPS with the operator's certificate, cookies are HTTPS-only, HSTS is sent, and
``check --deploy`` has nothing to report."""

import datetime
import ipaddress
import os
import re
import socket
import ssl
import subprocess
import sys
import time

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from lawdesk.run import asgi_server_command
from tests.support.paths import BASE_DIR
from tests.support.processes import free_port


def _self_signed(folder) -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lawdesk.office.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def _env(tmp_path, cert: str, key: str) -> dict:
    env = dict(os.environ, LAWDESK_DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="lawdesk.settings",
               LAWDESK_TLS_CERT=cert, LAWDESK_TLS_KEY=key, LAWDESK_SECRET_KEY="")
    for name in ("DATABASE_URL", "LAWDESK_TEST_SQLITE"):
        env.pop(name, None)
    return env


def test_check_deploy_reports_nothing_in_tls_mode(tmp_path):
    cert, key = _self_signed(tmp_path)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=BASE_DIR, capture_output=True,
                            text=True, env=_env(tmp_path, cert, key), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout and "WARNINGS" not in result.stderr + result.stdout


def test_half_a_tls_setting_is_refused(tmp_path):
    cert, _ = _self_signed(tmp_path)
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=BASE_DIR, capture_output=True, text=True,
                            env=_env(tmp_path, cert, ""), timeout=120)
    assert result.returncode != 0 and "LAWDESK_TLS_KEY" in result.stderr


def test_an_attorney_logs_in_over_https(tmp_path):
    cert, key = _self_signed(tmp_path)
    env = _env(tmp_path, cert, key)
    subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=BASE_DIR, env=env, check=True,
                   timeout=300)
    subprocess.run([sys.executable, "manage.py", "shell", "-c",
                    "from django.contrib.auth.models import User; "
                    "User.objects.create_user('alice', password='correct-horse-battery')"],
                   cwd=BASE_DIR, env=env, check=True, timeout=120)
    port = free_port()
    server = subprocess.Popen(asgi_server_command("127.0.0.1", port, tls=(cert, key)), cwd=BASE_DIR, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the HTTPS server did not start"
                time.sleep(0.1)
        base = f"https://127.0.0.1:{port}"
        with pytest.raises(httpx.TransportError):  # plain HTTP is not served at all
            httpx.get(f"http://127.0.0.1:{port}/login/", timeout=5)
        with httpx.Client(base_url=base, verify=ssl.create_default_context(cafile=cert), timeout=10) as client:
            login = client.get("/login/")
            assert login.status_code == 200
            assert "max-age=31536000" in login.headers["strict-transport-security"]
            assert re.search(r"csrftoken=[^;]+;.*\bSecure\b", login.headers["set-cookie"])
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
            answer = client.post("/login/", data={"username": "alice", "password": "correct-horse-battery",
                                                  "csrfmiddlewaretoken": token},
                                 headers={"Referer": f"{base}/login/"})
            assert answer.status_code == 302 and answer.headers["location"] == "/"
            session_cookie = [c for c in answer.headers.get_list("set-cookie") if c.startswith("sessionid=")]
            assert session_cookie and "Secure" in session_cookie[0] and "HttpOnly" in session_cookie[0]
            home = client.get("/")
            assert home.status_code == 200 and "Matters" in home.text
    finally:
        server.terminate()
        server.wait(timeout=15)
