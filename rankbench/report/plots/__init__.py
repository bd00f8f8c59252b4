"""The figures of a run's report (``<run>/plots``), one concern per module: :mod:`.style` (the look
and the files), :mod:`.layout` (what a reader would see wrong), :mod:`.kinds` (the figure kinds),
:mod:`.choice` (which figures a run gets) and :mod:`.draw` (drawing them, reused while current)."""
