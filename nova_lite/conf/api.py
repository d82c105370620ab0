"""[api] options of the nova_lite REST API."""

from oslo_config import cfg

api_group = cfg.OptGroup(
    'api',
    title='API options',
    help='Options of the compute (/v2.1) and volume (/v3) REST API.')

ALL_OPTS = [
    cfg.StrOpt(
        'auth_strategy',
        default='noauth2',
        choices=[
            ('noauth2', 'Development and test only: the token '
                        '``user:project`` is trusted as is, and the user '
                        '``admin`` is an administrator.'),
            ('keystone', 'Validate tokens with keystonemiddleware '
                         '``auth_token`` (configure its '
                         '``[keystone_authtoken]`` group).'),
        ],
        help="""
How the API authenticates requests.

``noauth2`` must never be used where untrusted clients can reach the API: any
token of the form ``user:project`` is accepted. A request without a token is
refused with 401 in both modes.
"""),
    cfg.IntOpt(
        'max_limit',
        default=1000,
        min=1,
        help="""
The largest number of items a list call returns in one response, whatever
``limit`` the client asks for.
"""),
    cfg.StrOpt(
        'response_validation',
        default='ignore',
        choices=[
            ('error', 'Validate every response body against its schema and '
                      'turn a mismatch into a 500. For tests.'),
            ('warn', 'Validate and log a warning on a mismatch.'),
            ('ignore', 'Do not validate responses.'),
        ],
        help="""
Whether response bodies are checked against the documented response schemas.

Each route declares a response schema per microversion band. The unit,
functional and integration tests run with ``error``, so every view the code
can produce has been checked against its schema before a release; checking
again in production finds nothing new and costs CPU on every response: about
0.2 ms for one server or attachment and 5 ms for a list of 50 attachments on
a 2-CPU machine, more than the rest of such a request. Hence ``ignore`` by
default. ``warn`` is useful while developing against a deployment (a
mismatch is logged, the client still gets the response); ``error`` turns a
mismatch into a 500 and is meant for test runs.
"""),
    cfg.StrOpt(
        'compute_link_prefix',
        help="""
Public URL prefix of the compute API to use in links of version documents and
``Location`` headers, when the API sits behind a proxy that does not pass
``X-Forwarded-Proto``/``Host``. Unset means: from the request.
"""),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(ALL_OPTS, group=api_group)


def list_opts():
    return {api_group: ALL_OPTS}
