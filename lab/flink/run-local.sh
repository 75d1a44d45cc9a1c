#!/usr/bin/env bash
# Run FailoverLabJob in a local MiniCluster (stand-in for the operator's JobManager/TaskManager pods).
#
#   lab/flink/run-local.sh [--conf key=value]... [--conf-file flink-conf.yaml] [--rate 50] [--keys 8] \
#                          [--checkpoint-interval-ms 2000] [--job-name failover-lab]
#
# Example:
#   lab/flink/run-local.sh --conf state.checkpoints.dir=file:///tmp/ckpt --conf rest.port=38081
#   lab/flink/run-local.sh --conf state.checkpoints.dir=file:///tmp/ckpt --conf rest.port=38082 \
#       --conf execution.savepoint.path=file:///tmp/ckpt/<jobId>/chk-7
#   # S3-compatible store (SeaweedFS, MinIO) through the jar's own s3:// FileSystem (README "S3");
#   # the bucket must exist:
#   lab/flink/run-local.sh --conf s3.endpoint=http://127.0.0.1:24336 --conf s3.path.style.access=true \
#       --conf s3.access-key=KEY --conf s3.secret-key=SECRET \
#       --conf state.checkpoints.dir=s3://flink-checkpoints/<ns>/<name> --conf rest.port=38081
#
# Environment: JAVA (default: java), JAR (default: target/failover-lab-flink-job.jar next to this
# script), JAVA_OPTS (extra JVM flags, e.g. -Xmx512m), FLINK_PLUGINS_DIR (default: ./plugins).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAVA="${JAVA:-java}"
JAR="${JAR:-${here}/target/failover-lab-flink-job.jar}"

if [[ ! -f "${JAR}" ]]; then
  echo "missing ${JAR}; build it with: (cd ${here} && mvn -B -q package -DskipTests)" >&2
  exit 1
fi

# Flink 1.20 on Java 17: reflective access Flink/Kryo needs (keep in sync with pom.xml flink.jvm.opens).
ADD_OPENS=(
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.time=ALL-UNNAMED
  --add-opens=java.base/java.text=ALL-UNNAMED
  --add-opens=java.base/java.math=ALL-UNNAMED
  --add-opens=java.sql/java.sql=ALL-UNNAMED
)

# shellcheck disable=SC2086 # JAVA_OPTS is intentionally word-split
exec "${JAVA}" "${ADD_OPENS[@]}" ${JAVA_OPTS:-} -cp "${JAR}" io.karmadafailover.lab.flink.LocalRunner "$@"
