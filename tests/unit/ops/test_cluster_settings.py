"""The settings of a deployment on a Redis Cluster: the broker and beat's schedules are
never the cluster, and a service that would make them so refuses to start, naming why."""

from __future__ import annotations

import pytest

from services.bootstrap.projection import owned_partitions, projector_index
from services.settings import ProjectionSettings, Settings, load_settings

CLUSTER = {"CARDARENA_REDIS_CLUSTER": "true", "REDIS_URL": "redis://node-1:6379/0"}


def test_on_a_cluster_the_broker_must_be_named() -> None:
    settings = load_settings(CLUSTER)
    with pytest.raises(ValueError, match="CELERY_BROKER_URL"):
        _ = settings.celery_broker
    named = load_settings({**CLUSTER, "CELERY_BROKER_URL": "amqp://guest@rabbit:5672/x"})
    assert named.celery_broker == "amqp://guest@rabbit:5672/x"
    assert load_settings({}).celery_broker == Settings().redis_url  # one Redis: it is the broker


def test_beats_schedules_live_in_a_standalone_redis() -> None:
    assert load_settings({}).schedules_redis == Settings().redis_url
    over_redis = load_settings({**CLUSTER, "CELERY_BROKER_URL": "redis://broker:6379/1"})
    assert over_redis.schedules_redis == "redis://broker:6379/1"
    over_rabbit = load_settings({**CLUSTER, "CELERY_BROKER_URL": "amqp://rabbit//"})
    with pytest.raises(ValueError, match="CARDARENA_SCHEDULES_REDIS_URL"):
        _ = over_rabbit.schedules_redis
    own = load_settings(
        {
            **CLUSTER,
            "CELERY_BROKER_URL": "amqp://rabbit//",
            "CARDARENA_SCHEDULES_REDIS_URL": "redis://s",
        }
    )
    assert own.schedules_redis == "redis://s"


def test_projectors_own_disjoint_partitions_that_cover_the_feed() -> None:
    env = {"CARDARENA_PROJECTORS": "3", "CARDARENA_PARTITIONS": "16"}
    settings = load_settings(env, ProjectionSettings)
    owned = [owned_partitions(settings, index) for index in range(3)]
    assert sorted(p for part in owned for p in part) == list(range(16))
    assert projector_index(settings, "projection-2") == 2
    assert (
        projector_index(
            load_settings({**env, "CARDARENA_PROJECTOR_INDEX": "1"}, ProjectionSettings)
        )
        == 1
    )
    for name in ("projection-3", "laptop", "projection-7d9f8b6c5-x2k4q", "projection-01"):
        with pytest.raises(ValueError, match="CARDARENA_PROJECTOR_INDEX"):
            projector_index(settings, name)
    past = load_settings({**env, "CARDARENA_PROJECTOR_INDEX": "3"}, ProjectionSettings)
    with pytest.raises(ValueError, match="not below"):
        projector_index(past)


def test_a_single_projector_is_index_0_whatever_its_pod_is_named() -> None:
    settings = load_settings({}, ProjectionSettings)
    for name in ("laptop", "cardarena-projection-7d9f8b6c5-24567", "projection-3"):
        assert projector_index(settings, name) == 0
    few = load_settings(
        {"CARDARENA_PROJECTORS": "4", "CARDARENA_PARTITIONS": "2"}, ProjectionSettings
    )
    with pytest.raises(ValueError, match="own none"):
        owned_partitions(few, 3)
