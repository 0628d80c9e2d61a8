"""objstore's SigV4 signer against botocore's S3SigV4Auth (the signer of
the AWS CLI and boto3) over fixed timestamps: keys with spaces, Unicode,
'+', '..', listings with prefixes and continuation tokens that need
encoding, ranges, session tokens, regions. Skips (77) without botocore.

usage: test_sigv4_botocore.py SIGV4_TOOL
"""
import datetime
import subprocess
import sys
from urllib.parse import quote

try:
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:
    print("SKIP: botocore is not installed")
    sys.exit(77)

TOOL = sys.argv[1]
WHEN = datetime.datetime(2026, 3, 14, 15, 9, 26)
botocore.auth.get_current_datetime = lambda: WHEN
AMZ = WHEN.strftime("%Y%m%dT%H%M%SZ")

CASES = [
    # (method, host, key, query pairs, extra headers, region, token)
    ("GET", "bkt.s3.us-east-1.amazonaws.com", "", [("list-type", "2"),
     ("prefix", "runs/exp 1/"), ("max-keys", "1000")], {}, "us-east-1", None),
    ("GET", "127.0.0.1:9000", "bkt/", [("list-type", "2"), ("prefix", "a+b/ü"),
     ("continuation-token", "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")],
     {}, "eu-west-1", None),
    ("GET", "bkt.s3.eu-central-1.amazonaws.com",
     "logs/run one/events.out.tfevents.1.h.2.0", [], {"Range": "bytes=100-"},
     "eu-central-1", None),
    ("HEAD", "s3.amazonaws.com", "bkt/k+with+plus/ünï cödé/..x/../y", [],
     {}, "us-east-1", "FQoGZXIvYXdzE//token+with/slash="),
    ("PUT", "storage.googleapis.com", "gbkt/run/events.out.tfevents.9.h.1.000003",
     [("partNumber", "3"), ("uploadId", "VXBsb2FkIElE+/=")], {},
     "auto", None),
    ("POST", "bkt.s3.amazonaws.com", "big object", [("uploads", "")], {},
     "us-west-2", None),
    ("GET", "bkt.s3.amazonaws.com", "~tilde_-.", [("b", "2"), ("a", "1"),
     ("A", "0")], {"X-Amz-Meta-Note": "  two   spaces  "}, "us-east-1", None),
]

fails = 0
for i, (method, host, key, query, extra, region, token) in enumerate(CASES):
    creds = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                        token)
    path = "/" + quote(key, safe="/~")
    qs = "&".join(quote(k, safe="-_.~") + "=" + quote(v, safe="-_.~")
                  for k, v in query)
    url = "https://" + host + path + ("?" + qs if qs else "")
    headers = {"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"}
    headers.update(extra)
    req = AWSRequest(method=method, url=url, headers=headers)
    botocore.auth.S3SigV4Auth(creds, "s3", region).add_auth(req)
    want = req.headers["Authorization"]
    # what botocore signed: host plus its signed headers, as it sent them
    signed = want.split("SignedHeaders=")[1].split(",")[0].split(";")
    args = [TOOL, method, "/" + key, AMZ, region, "s3", creds.access_key,
            creds.secret_key, req.headers["X-Amz-Content-SHA256"]]
    for k, v in query:
        args += ["q", k, v]
    for name in signed:
        v = host if name == "host" else req.headers[name]
        args += ["h", name, v]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    creq, sts, auth = out.stdout.rstrip("\n").split("\n----\n")
    if auth != want:
        fails += 1
        print("case %d (%s %s): differs\n ours: %s\n boto: %s\n creq:\n%s"
              % (i, method, key, auth, want, creq))
    else:
        print("case %d ok: %s" % (i, want[-20:]))
print("%d of %d cases differ" % (fails, len(CASES)))
sys.exit(1 if fails else 0)
