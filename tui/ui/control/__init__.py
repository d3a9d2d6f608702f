"""The app's controllers: mixins of ``DetectiveApp``, one per concern, on the app's own state.

``probing`` schedules probes and streams their progress, ``hostkeys`` asks about unknown and
changed host keys, ``fixing`` routes fixes, undos, restarts and validation to their screens.
"""
