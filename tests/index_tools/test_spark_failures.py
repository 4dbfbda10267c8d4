"""A failed Spark build's message: Java's exception, or that the JVM ended (no Spark here)."""

from __future__ import annotations

from index_tools.build.spark import spark_failure


class _Java:
    def __init__(self, text: str):
        self.text = text

    def toString(self) -> str:  # noqa: N802 - the JVM's name
        return self.text


def _py4j_error(java):
    def dead(_self):
        raise ConnectionError("Answer from Java side is empty")

    cls = type("Py4JJavaError", (Exception,), {"__module__": "py4j.protocol", "__str__": dead})
    e = cls()
    if java is not None:
        e.java_exception = java
    return e


def test_java_s_cause_is_the_message():
    e = _py4j_error(
        _Java(
            "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in "
            "stage 40.0 failed 1 times: java.lang.OutOfMemoryError: Java heap space"
        )
    )
    assert spark_failure(e) == (
        "the Spark build failed: org.apache.spark.SparkException: Job aborted due to stage "
        "failure: Task 0 in stage 40.0 failed 1 times: java.lang.OutOfMemoryError: Java "
        "heap space"
    )


def test_a_python_task_s_error_is_its_last_line():
    e = _py4j_error(
        _Java(
            "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
            '  File "worker.py", line 1, in main\n'
            "OSError: [Errno 28] No space left on device\n"
        )
    )
    assert spark_failure(e) == (
        "the Spark build failed: OSError: [Errno 28] No space left on device"
    )


def test_a_jvm_that_ended_is_said_without_asking_it():
    class Gone:
        def toString(self):  # noqa: N802
            raise ConnectionError("Answer from Java side is empty")

    message = spark_failure(_py4j_error(Gone()))
    assert message.startswith("the Spark build failed: Spark's JVM did not start or ended")
    assert "--spark-conf spark.driver.memory=" in message
    assert spark_failure(_py4j_error(None)) == message
