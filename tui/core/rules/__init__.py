"""What the rules stand on and how they are run: the view model every rule reads (``subject``), the
rule helpers, the FlashInfer replay, the completeness of a probe, the error-signature catalogue,
and ``evaluate`` (the finding registry run on facts)."""
