"""The settling's rules that need no database: the table of every task's
steps (and the contributor docs' tables saying the same), a service
refuses to start when ``[recovery] stalled_after`` is not well above the
waits nothing keeps alive, and the in-hand set of a process."""

import os
import re

from nova_lite.compute.host import manager as compute_manager
from nova_lite.conductor import manager as conductor_manager
from nova_lite import exception
from nova_lite import tasks
from tests import base

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'doc', 'source', 'contributor',
    'crash-safety.rst')
OWNERS = {'API': tasks.API, 'conductor': tasks.CONDUCTOR,
          'compute': tasks.COMPUTE, 'nova-lite-manage': tasks.MANAGE}
# crash-safety.rst's sections with tables of a task's steps: which task,
# and the table (by its order in the section) of work without a host.
SECTIONS = {'Attach': (tasks.ATTACHING, None),
            'Detach': (tasks.DETACHING, None),
            'Swap': (tasks.SWAPPING, 1),
            'Refresh': (tasks.REFRESHING, None),
            'Detach without a host': (tasks.DETACHING, 0)}


def doc_tables(text):
    """``[(section title, [rows])]`` of the simple tables of ``text``,
    each row a list of its columns' text (continuation lines joined)."""
    lines = text.splitlines()
    tables = []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if (i + 1 < len(lines) and line.strip() and
                re.match(r'^-{3,}$', lines[i + 1]) and
                len(lines[i + 1]) >= len(line.rstrip())):
            section = line.strip()
        if re.match(r'^=+( +=+)+$', line):
            spans = [m.span() for m in re.finditer(r'=+', line)]
            end = [j for j in range(i + 1, len(lines))
                   if lines[j] == line]
            header_end, table_end = end[0], end[1]
            rows = []
            for row in lines[header_end + 1:table_end]:
                cells = [row[a:b if k < len(spans) - 1 else None].strip()
                         for k, (a, b) in enumerate(spans)]
                if cells[0] or not rows:
                    rows.append(cells)
                else:
                    rows[-1] = [(p + ' ' + c).strip()
                                for p, c in zip(rows[-1], cells)]
            tables.append((section, rows))
            i = table_end + 1
            continue
        i += 1
    return tables


def on_crash(text):
    """The settling's action a row's last column names first."""
    found = [(text.find(word), action) for word, action in (
        ('re-drive', tasks.REDRIVE), ('roll back', tasks.ROLL_BACK),
        ('finish', tasks.FINISH)) if word in text]
    return min(found)[1] if found else None


class StepsTest(base.TestCase):
    def test_every_next_step_is_a_step_of_its_task(self):
        for table in (tasks.STEPS, tasks.WITHOUT_HOST):
            for task, steps in table.items():
                for step, spec in steps.items():
                    self.assertTrue(set(spec.next) <= set(steps),
                                    (task, step, spec.next))
                    self.assertIn(spec.on_crash, (
                        tasks.FINISH, tasks.ROLL_BACK, tasks.REDRIVE))
        for task, steps in tasks.WITHOUT_HOST.items():
            self.assertTrue(set(steps) <= set(tasks.STEPS[task]), task)
            for step, spec in steps.items():
                # Every move without a host is one the table allows.
                self.assertTrue(
                    set(spec.next) <= set(tasks.STEPS[task][step].next),
                    (task, step))

    def test_the_step_of_work_without_a_host(self):
        self.assertEqual(tasks.REDRIVE, tasks.step_of(
            tasks.DETACHING, tasks.ACCEPTED).on_crash)
        self.assertEqual(tasks.FINISH, tasks.step_of(
            tasks.DETACHING, tasks.ACCEPTED, without_host=True).on_crash)
        self.assertEqual(tasks.ROLL_BACK, tasks.step_of(
            tasks.SWAPPING, tasks.RESERVED, without_host=True).on_crash)
        # A task with no steps of its own without a host: the table's.
        self.assertEqual(tasks.STEPS[tasks.ATTACHING][tasks.ACCEPTED],
                         tasks.step_of(tasks.ATTACHING, tasks.ACCEPTED,
                                       without_host=True))

    def test_moves_are_checked(self):
        tasks.check_move(tasks.ATTACHING, tasks.ACCEPTED, tasks.RESERVING)
        tasks.check_move(tasks.SWAPPING, tasks.RESERVED, tasks.SWAPPED)
        self.assertRaises(ValueError, tasks.check_move, tasks.ATTACHING,
                          tasks.ACCEPTED, tasks.CAST)
        self.assertRaises(ValueError, tasks.check_move, tasks.DETACHING,
                          tasks.RELEASING, tasks.GUEST_DETACHED)
        self.assertRaises(ValueError, tasks.check_move, None, None,
                          tasks.ACCEPTED)
        self.assertRaises(ValueError, tasks.check_step, tasks.REFRESHING,
                          tasks.CAST)
        self.assertRaises(ValueError, tasks.check_step, tasks.DETACHING,
                          None)

    def test_the_contributor_docs_tables_say_the_same(self):
        with open(DOC) as f:
            tables = doc_tables(f.read())
        seen = {task: set() for task in tasks.STEPS}
        checked = 0
        by_section = {}
        for section, rows in tables:
            names = [n for n in SECTIONS if section.startswith(n)]
            if not names:
                continue
            name = max(names, key=len)
            index = by_section.setdefault(name, 0)
            by_section[name] += 1
            task, without_host_table = SECTIONS[name]
            for row in rows:
                step_name = re.fullmatch(r'(?:detach )?``(\w+)``', row[0])
                if not step_name or (name.startswith('Detach without') and
                                     not row[0].startswith('detach ')):
                    continue
                step = step_name.group(1)
                table = tasks.STEPS
                if index == without_host_table:
                    table = tasks.WITHOUT_HOST
                self.assertIn(step, table[task], (section, row))
                spec = table[task][step]
                self.assertEqual(
                    (spec.owner, spec.on_crash),
                    (OWNERS.get(row[1]), on_crash(row[-1])),
                    '%s: %s' % (section, row))
                seen[task].add(step)
                checked += 1
        for task, steps in tasks.STEPS.items():
            self.assertEqual(set(steps), seen[task], task)
        self.assertGreater(checked, 20)

    def test_on_crash_answers_from_the_tables(self):
        self.assertEqual(tasks.FINISH, tasks.on_crash(
            tasks.ATTACHING, tasks.CONNECTED))
        self.assertEqual(tasks.ROLL_BACK, tasks.on_crash(
            tasks.ATTACHING, tasks.CONNECTED, fenced=True))
        self.assertEqual(tasks.FINISH, tasks.on_crash(
            tasks.DETACHING, tasks.ACCEPTED, without_host=True))
        self.assertEqual(tasks.FINISH, tasks.on_crash(
            tasks.DETACHING, tasks.ACCEPTED, fenced=True))
        self.assertEqual(tasks.ROLL_BACK, tasks.on_crash(
            tasks.SWAPPING, tasks.CONNECTED, fenced=True))
        self.assertEqual(tasks.FINISH, tasks.on_crash(
            tasks.SWAPPING, tasks.GUEST_SWAPPED, fenced=True))

    def test_the_fenced_table_has_every_step(self):
        self.assertEqual(set(tasks.STEPS), set(tasks.FENCED))
        for task, steps in tasks.STEPS.items():
            self.assertEqual(set(steps), set(tasks.FENCED[task]), task)
            self.assertTrue(set(tasks.FENCED[task].values()) <= {
                tasks.FINISH, tasks.ROLL_BACK}, task)

    def test_the_fencing_table_of_the_docs_says_the_same(self):
        with open(DOC) as f:
            text = f.read()
        section = text[text.index('\nFencing\n'):]
        # The table sits in a bullet: indented by two.
        dedented = '\n'.join(
            line[2:] if line.startswith('  ') else line
            for line in section.splitlines())
        _title, rows = doc_tables(dedented)[0]
        names = {'attach': tasks.ATTACHING, 'detach': tasks.DETACHING,
                 'swap': tasks.SWAPPING}
        seen = {task: set() for task in names.values()}
        for row in rows:
            what, _sep, which = row[0].partition(',')
            task = names.get(what.strip())
            if task is None:
                continue    # a server's delete, not a mapping's task
            order = list(tasks.STEPS[task])
            named = re.findall(r'``(\w+)``', which)
            if 'any step' in which:
                steps = order
            elif which.strip().startswith('before'):
                steps = order[:order.index(named[0])]
            else:
                steps = named
            action = (tasks.ROLL_BACK if row[1].startswith('rolled back')
                      else tasks.FINISH if row[1].startswith('finished')
                      else None)
            for step in steps:
                self.assertEqual(tasks.FENCED[task][step], action,
                                 (task, step, row))
                seen[task].add(step)
        for task, steps in seen.items():
            self.assertEqual(set(tasks.STEPS[task]), steps, task)


class StalledAfterTest(base.TestCase):
    def test_defaults_and_the_integration_timers_pass(self):
        tasks.check_stalled_after(self.conf)
        self.conf.set_override('service_down_time', 4)
        self.conf.set_override('stalled_after', 5, group='recovery')
        tasks.check_stalled_after(self.conf)

    def test_below_the_liveness_rule_is_refused_saying_by_how_much(self):
        self.conf.set_override('service_down_time', 90)
        self.conf.set_override('stalled_after', 60, group='recovery')
        exc = self.assertRaises(exception.InvalidConfiguration,
                                tasks.check_stalled_after, self.conf)
        message = exc.format_message()
        self.assertIn('[recovery] stalled_after (60s) must be at least '
                      '[DEFAULT] service_down_time (90s), that is 90s: '
                      'raise it by 30s', message)
        self.assertIn('is taken from its owner', message)

    def test_a_rest_block_storage_timeout_counts_twice(self):
        self.conf.set_override('client', 'cinder', group='volume')
        self.conf.set_override('timeout', 45, group='cinder')
        exc = self.assertRaises(exception.InvalidConfiguration,
                                tasks.check_stalled_after, self.conf)
        self.assertIn('must be at least 2 times [cinder] timeout (45s), '
                      'that is 90s: raise it by 30s', exc.format_message())
        self.conf.set_override('stalled_after', 90, group='recovery')
        tasks.check_stalled_after(self.conf)

    def test_the_long_waits_are_kept_alive_not_counted(self):
        # The reservation call (long_rpc_timeout) and a busy multiattach
        # volume touch the task instead: they do not bound stalled_after.
        self.conf.set_override('long_rpc_timeout', 1800)
        self.conf.set_override('multiattach_reserve_timeout', 600,
                               group='compute')
        tasks.check_stalled_after(self.conf)
        self.assertEqual(15.0, tasks.keep_alive_interval(self.conf))


class InHandTest(base.TestCase):
    def test_holding(self):
        in_hand = tasks.InHand()
        with in_hand.holding(('a', 'detach')) as mine:
            self.assertTrue(mine)
            with in_hand.holding(('a', 'detach')) as again:
                self.assertFalse(again)
            with in_hand.holding('b') as other:
                self.assertTrue(other)
                self.assertEqual({'a', 'b'}, in_hand.uuids())
            self.assertEqual({'a'}, in_hand.uuids())
        self.assertEqual(set(), in_hand.uuids())


class RefusesToStartTest(base.TestCase):
    def test_conductor_and_compute(self):
        self.conf.set_override('stalled_after', 30, group='recovery')
        for manager in (conductor_manager.ConductorManager(self.conf, 'c1'),
                        compute_manager.ComputeManager(self.conf, 'h1')):
            # Before anything else (no database is needed to refuse).
            exc = self.assertRaises(exception.InvalidConfiguration,
                                    manager.init_host, None)
            self.assertIn('raise it by 30s', exc.format_message())
