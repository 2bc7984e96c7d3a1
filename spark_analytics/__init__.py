"""PySpark audits of what was replicated and how offsets were translated (the only pyspark importer)."""
