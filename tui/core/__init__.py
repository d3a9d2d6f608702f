"""The engine of detective-tui. Nothing under ``tui.core`` may import Textual."""
