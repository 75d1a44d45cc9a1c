# The Flink job image of the kind lab: the official Flink image of the version
# lab/flink/pom.xml builds against, with the lab's thin job jar (the job and the
# datagen connector; Flink, Kryo and logging from the image's lib/) in usrlib (where the
# FlinkDeployment's jarURI local:///opt/flink/usrlib/failover-lab-flink-job.jar
# points) and Flink's own S3 file system plugin enabled for s3:// checkpoints in
# MinIO. Build context: lab/flink/target (lab/kind/build-images.sh).
ARG FLINK_VERSION=1.20.5
FROM docker.io/library/flink:${FLINK_VERSION}-scala_2.12-java17
RUN mkdir -p /opt/flink/plugins/s3-fs-presto /opt/flink/usrlib \
 && cp /opt/flink/opt/flink-s3-fs-presto-*.jar /opt/flink/plugins/s3-fs-presto/
COPY --chown=flink:flink failover-lab-flink-job-thin.jar /opt/flink/usrlib/failover-lab-flink-job.jar
