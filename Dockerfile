# Hugging Face Space (Docker SDK): Redis + Celery worker(s) + the web process in one container on :7860.
# Configured only by environment variables (Space variables and secrets); see docs/deploy.md.
# ROLE=all (default) runs everything; ROLE=web or ROLE=worker split them for the scaled deployment.
FROM python:3.11-slim-bookworm

# redis-server is the broker of the single-container deployment; tini reaps the children we start.
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server=5:7.0.15-1~deb12u10 tini=0.19.0-1+b3 \
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
    DATA_DIR=/home/user/data \
    PORT=7860 \
    HOST=0.0.0.0 \
    ROLE=all
WORKDIR /home/user/app

COPY --chown=user requirements.txt ./
RUN pip install --no-cache-dir --user -r requirements.txt

COPY --chown=user scoring ./scoring
COPY --chown=user worker ./worker
COPY --chown=user space ./space
COPY --chown=user data/demo ./data/demo
COPY --chown=user docker ./docker

EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/api/v1/health' % os.environ.get('PORT', '7860'), timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--", "/home/user/app/docker/entrypoint.sh"]
