"""Initial schema: compute and block-storage tables

Revision ID: 50f9baf8f6b2
Revises:
Create Date: 2026-05-09 12:00:00

Frozen: this file describes the schema as it was first released and must
not import nova_lite.db.models (which will move on).
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# revision identifiers, used by Alembic.
revision = '50f9baf8f6b2'
down_revision = None
branch_labels = None
depends_on = None

_TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _datetime():
    # Microseconds on MySQL/MariaDB too (plain DATETIME drops them).
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


def _mediumtext():
    return sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


def _timestamps():
    return [
        sa.Column('created_at', _datetime(), nullable=True),
        sa.Column('updated_at', _datetime(), nullable=True),
    ]


def upgrade():
    _create_compute_tables()
    _create_volume_tables()


def _create_compute_tables():
    op.create_table(
        'services',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('binary', sa.String(255), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('topic', sa.String(255), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('disabled', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.String(255), nullable=True),
        sa.Column('forced_down', sa.Boolean(), nullable=False),
        sa.Column('last_seen_up', _datetime(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_services'),
        sa.UniqueConstraint('uuid', name='uniq_services0uuid'),
        sa.UniqueConstraint('host', 'binary',
                            name='uniq_services0host0binary'),
        **_TABLE_ARGS,
    )

    op.create_table(
        'instances',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('display_name', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('flavor_id', sa.String(255), nullable=False),
        sa.Column('image_ref', sa.String(255), nullable=True),
        sa.Column('vm_state', sa.String(255), nullable=False),
        sa.Column('task_state', sa.String(255), nullable=True),
        sa.Column('power_state', sa.Integer(), nullable=False),
        sa.Column('launched_at', _datetime(), nullable=True),
        sa.Column('terminated_at', _datetime(), nullable=True),
        sa.Column('locked', sa.Boolean(), nullable=False),
        sa.Column('locked_by', sa.String(255), nullable=True),
        sa.Column('locked_reason', sa.Text(), nullable=True),
        sa.Column('reservation_id', sa.String(255), nullable=True),
        sa.Column('launch_index', sa.Integer(), nullable=False),
        sa.Column('root_device_name', sa.String(255), nullable=True),
        sa.Column('shelved_at', _datetime(), nullable=True),
        sa.Column('deleted_at', _datetime(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_instances'),
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_instances_project_id', 'instances', ['project_id'])
    op.create_index('ix_instances_host', 'instances', ['host'])

    op.create_table(
        'block_device_mappings',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('source_type', sa.String(255), nullable=False),
        sa.Column('destination_type', sa.String(255), nullable=False),
        sa.Column('guest_format', sa.String(255), nullable=True),
        sa.Column('device_type', sa.String(255), nullable=True),
        sa.Column('disk_bus', sa.String(255), nullable=True),
        sa.Column('boot_index', sa.Integer(), nullable=True),
        sa.Column('device_name', sa.String(255), nullable=True),
        sa.Column('delete_on_termination', sa.Boolean(), nullable=False),
        sa.Column('snapshot_id', sa.String(36), nullable=True),
        sa.Column('volume_id', sa.String(36), nullable=True),
        sa.Column('image_id', sa.String(36), nullable=True),
        sa.Column('volume_size', sa.Integer(), nullable=True),
        sa.Column('no_device', sa.Boolean(), nullable=False),
        sa.Column('connection_info', _mediumtext(), nullable=True),
        sa.Column('tag', sa.String(255), nullable=True),
        sa.Column('attachment_id', sa.String(36), nullable=True),
        sa.Column('volume_type', sa.String(255), nullable=True),
        sa.Column('attach_mode', sa.String(2), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_block_device_mappings'),
        sa.UniqueConstraint('uuid', name='uniq_block_device_mappings0uuid'),
        sa.UniqueConstraint(
            'instance_uuid', 'volume_id',
            name='uniq_block_device_mappings0instance_uuid0volume_id'),
        sa.UniqueConstraint(
            'instance_uuid', 'device_name',
            name='uniq_block_device_mappings0instance_uuid0device_name'),
        sa.ForeignKeyConstraint(
            ['instance_uuid'], ['instances.uuid'], ondelete='CASCADE',
            name='fk_block_device_mappings_instance_uuid_instances'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_block_device_mappings_instance_uuid',
                    'block_device_mappings', ['instance_uuid'])
    op.create_index('ix_block_device_mappings_volume_id',
                    'block_device_mappings', ['volume_id'])

    op.create_table(
        'instance_actions',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('action', sa.String(255), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('request_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('start_time', _datetime(), nullable=False),
        sa.Column('finish_time', _datetime(), nullable=True),
        sa.Column('message', sa.String(255), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_instance_actions'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_instance_actions_instance_uuid',
                    'instance_actions', ['instance_uuid'])
    op.create_index('ix_instance_actions_instance_uuid_request_id',
                    'instance_actions', ['instance_uuid', 'request_id'])

    op.create_table(
        'instance_actions_events',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('action_id', sa.Integer(), nullable=False),
        sa.Column('event', sa.String(255), nullable=False),
        sa.Column('result', sa.String(255), nullable=True),
        sa.Column('traceback', sa.Text(), nullable=True),
        sa.Column('start_time', _datetime(), nullable=False),
        sa.Column('finish_time', _datetime(), nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('details', sa.Text(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_instance_actions_events'),
        sa.ForeignKeyConstraint(
            ['action_id'], ['instance_actions.id'], ondelete='CASCADE',
            name='fk_instance_actions_events_action_id_instance_actions'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_instance_actions_events_action_id',
                    'instance_actions_events', ['action_id'])

    op.create_table(
        'instance_faults',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('code', sa.Integer(), nullable=False),
        sa.Column('message', sa.String(255), nullable=False),
        sa.Column('details', sa.Text(), nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_instance_faults'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_instance_faults_instance_uuid',
                    'instance_faults', ['instance_uuid'])


def _create_volume_tables():
    op.create_table(
        'volume_types',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('is_public', sa.Boolean(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_volume_types'),
        sa.UniqueConstraint('name', name='uniq_volume_types0name'),
        **_TABLE_ARGS,
    )

    op.create_table(
        'volume_type_extra_specs',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('volume_type_id', sa.String(36), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_volume_type_extra_specs'),
        sa.UniqueConstraint(
            'volume_type_id', 'key',
            name='uniq_volume_type_extra_specs0volume_type_id0key'),
        sa.ForeignKeyConstraint(
            ['volume_type_id'], ['volume_types.id'], ondelete='CASCADE',
            name='fk_volume_type_extra_specs_volume_type_id_volume_types'),
        **_TABLE_ARGS,
    )

    op.create_table(
        'volumes',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=False),
        sa.Column('display_name', sa.String(255), nullable=True),
        sa.Column('display_description', sa.Text(), nullable=True),
        sa.Column('size', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(255), nullable=False),
        sa.Column('attach_status', sa.String(255), nullable=False),
        sa.Column('multiattach', sa.Boolean(), nullable=False),
        sa.Column('bootable', sa.Boolean(), nullable=False),
        sa.Column('volume_type_id', sa.String(36), nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('migration_status', sa.String(255), nullable=True),
        sa.Column('provider_location', sa.Text(), nullable=True),
        sa.Column('encrypted', sa.Boolean(), nullable=False),
        sa.Column('deleted', sa.Boolean(), nullable=False),
        sa.Column('deleted_at', _datetime(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_volumes'),
        sa.ForeignKeyConstraint(
            ['volume_type_id'], ['volume_types.id'],
            name='fk_volumes_volume_type_id_volume_types'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_volumes_project_id', 'volumes', ['project_id'])
    op.create_index('ix_volumes_volume_type_id', 'volumes',
                    ['volume_type_id'])
    op.create_index('ix_volumes_deleted', 'volumes', ['deleted'])

    op.create_table(
        'volume_attachment',
        sa.Column('id', sa.String(36), nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=True),
        sa.Column('attached_host', sa.String(255), nullable=True),
        sa.Column('mountpoint', sa.String(255), nullable=True),
        sa.Column('attach_time', _datetime(), nullable=True),
        sa.Column('detach_time', _datetime(), nullable=True),
        sa.Column('attach_status', sa.String(255), nullable=False),
        sa.Column('attach_mode', sa.String(36), nullable=True),
        sa.Column('connection_info', _mediumtext(), nullable=True),
        sa.Column('deleted', sa.Boolean(), nullable=False),
        sa.Column('deleted_at', _datetime(), nullable=True),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_volume_attachment'),
        sa.ForeignKeyConstraint(
            ['volume_id'], ['volumes.id'],
            name='fk_volume_attachment_volume_id_volumes'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_volume_attachment_volume_id', 'volume_attachment',
                    ['volume_id'])
    op.create_index('ix_volume_attachment_instance_uuid',
                    'volume_attachment', ['instance_uuid'])
    op.create_index('ix_volume_attachment_deleted', 'volume_attachment',
                    ['deleted'])

    op.create_table(
        'attachment_specs',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('attachment_id', sa.String(36), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.Text(), nullable=False),
        *_timestamps(),
        sa.PrimaryKeyConstraint('id', name='pk_attachment_specs'),
        sa.UniqueConstraint('attachment_id', 'key',
                            name='uniq_attachment_specs0attachment_id0key'),
        sa.ForeignKeyConstraint(
            ['attachment_id'], ['volume_attachment.id'], ondelete='CASCADE',
            name='fk_attachment_specs_attachment_id_volume_attachment'),
        **_TABLE_ARGS,
    )
    op.create_index('ix_attachment_specs_attachment_id', 'attachment_specs',
                    ['attachment_id'])
