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

# Spaces run the container as uid 1000: create that user and own everything it writes.
RUN useradd --create-home --uid 1000 user
USER 1000
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    HF_HOME=/home/user/.cache/huggingface \
    HF_HUB_DISABLE_PROGRESS_BARS=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    DATA_DIR=/home/user/data \
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

EXPOSE 7860
# Role-aware (docker/healthcheck.py): the web answers /api/v1/health; a worker answers a ping through the broker.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "/home/user/app/docker/healthcheck.py"]
ENTRYPOINT ["/usr/bin/tini", "--", "/home/user/app/docker/entrypoint.sh"]
