"""Demo fleet and fake hosts: simulated GPU hosts that run through the real probe."""
