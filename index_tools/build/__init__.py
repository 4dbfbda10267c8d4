"""From a corpus to a published generation: corpus sources, per-document processing, the local builder on all cores and the Spark builder."""
