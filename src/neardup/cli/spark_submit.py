"""Entry for ``spark-submit``: ``neardup dedup ... --engine spark`` on the submitted master.

    ENTRY=$(python -c 'import neardup.cli.spark_submit as m; print(m.__file__)')
    spark-submit --master spark://host:7077 --conf spark.pyspark.python=/opt/neardup/bin/python \
        "$ENTRY" s3a://bucket/crawl/ --out s3a://bucket/marked.parquet

The arguments are those of ``neardup dedup`` (``--engine spark`` is implied); the master and
the executors' resources come from spark-submit. Every executor needs a Python with neardup
installed, named by ``spark.pyspark.python`` (or shipped with ``--archives``): docs/SCALE.md.
"""

from __future__ import annotations

import os
import sys

from neardup.cli import main

if __name__ == "__main__":
    os.environ["NEARDUP_SPARK_SUBMITTED"] = "1"
    sys.argv = [sys.argv[0], "dedup", *sys.argv[1:], "--engine", "spark"]
    main()
