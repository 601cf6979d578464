# native plugins only; this file is never read
