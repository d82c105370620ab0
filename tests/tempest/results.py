"""Read a subunit v2 stream (``stestr last --subunit``) on stdin; print one
JSON object per test: ``{"id", "status", "reason"}`` (the skip reason, or
the tail of the traceback of a failure).

Runs with tempest's interpreter (``.venv-tempest``), which has subunit and
testtools; it imports nothing of nova_lite.
"""

import json
import sys

import subunit
import testtools


def main():
    tests = []

    def on_test(test):
        details = test['details']
        reason = ''
        if 'reason' in details:
            reason = details['reason'].as_text()
        elif 'traceback' in details:
            reason = details['traceback'].as_text()[-3000:]
        tests.append({'id': test['id'].split('[')[0],
                      'status': test['status'], 'reason': reason.strip()})

    stream = subunit.ByteStreamToStreamResult(
        sys.stdin.buffer, non_subunit_name='stdout')
    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    try:
        stream.run(result)
    finally:
        result.stopTestRun()
    for test in tests:
        if test['id'].startswith('setUpClass') or test['status'] != 'exists':
            print(json.dumps(test))


if __name__ == '__main__':
    main()
