# Hugging Face Space (Docker SDK): Redis + Celery worker(s) + the web process in one container on :7860.
# Configured only by environment variables (Space variables and secrets); see docs/deploy.md.
# ROLE=all (default) runs everything; ROLE=web or ROLE=worker split them for the scaled deployment.
FROM python:3.11-slim-bookworm

# redis-server is the broker of the single-container deployment; tini reaps the children we start.
# redis-server lives in bookworm-security, which keeps only its newest build: pin the upstream version and
# accept any Debian security rebuild of it (~deb12uN), so the next security upload does not break rebuilds.
RUN apt-get update \
    && apt-get install -y --no-install-recommends 'redis-server=5:7.0.15-1~deb12u*' tini=0.19.0-1+b3 \
    && rm -rf /var/lib/apt/lists/*

# Two OS users. `user` (uid 1000) runs the workers and owns the references; `web` (uid 1001) runs the web
# process. Both are in group `varm`, which may read and write DATA_DIR's shared part (docker/two_users.py).
# Started as root (self-hosting: the default here), the entrypoint prepares DATA_DIR and steps down to each
# user at once; a Space starts the container as uid 1000, where one uid runs all and the web process shuts
# itself out of the workers' files with Landlock (space/sandbox.py). The packages are installed for `user`
# and found by every user through PYTHONUSERBASE.
RUN groupadd --gid 1500 varm \
    && useradd --create-home --uid 1000 --groups varm user \
    && useradd --create-home --uid 1001 --groups varm --shell /usr/sbin/nologin web \
    && chmod 0755 /home/user \
    && chmod 0700 /home/web
USER 1000
ENV HOME=/home/user \
    PYTHONUSERBASE=/home/user/.local \
    PATH=/home/user/.local/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    HF_HOME=/home/user/.cache/huggingface \
    HF_HUB_DISABLE_PROGRESS_BARS=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    DATA_DIR=/home/user/data \
    TWO_OS_USERS=1 \
    PORT=7860 \
    HOST=0.0.0.0 \
    ROLE=all
WORKDIR /home/user/app

# Every transitive version and its hashes (scripts/lock), so a rebuild next month installs the same bytes.
COPY --chown=user requirements.lock ./
RUN pip install --no-cache-dir --user --no-deps --require-hashes -r requirements.lock

COPY --chown=user scoring ./scoring
COPY --chown=user worker ./worker
COPY --chown=user space ./space
COPY --chown=user varm_client ./varm_client
COPY --chown=user data/demo ./data/demo
COPY --chown=user docker ./docker

# Root only long enough for the entrypoint to prepare DATA_DIR; every service runs as `user` or `web`
# (setpriv, no capabilities, no_new_privs), the pattern of the official database images.
# hadolint ignore=DL3002
USER 0
EXPOSE 7860
# Role-aware (docker/healthcheck.py): the web answers /api/v1/health; a worker answers a ping through the broker.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "/home/user/app/docker/healthcheck.py"]
ENTRYPOINT ["/usr/bin/tini", "--", "/home/user/app/docker/entrypoint.sh"]
