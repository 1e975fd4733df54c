# Avatar Kiosk as the Shell Launcher shell of the kiosk account (Windows 10/11 Enterprise, Education or
# IoT Enterprise): the account gets no Explorer, only the kiosk, and Windows starts the kiosk again
# whenever it ends, except after the staff panel's "Exit kiosk" (exit code 0; the app's own relaunch
# also exits with 0 after starting the new instance). Run in an administrator's PowerShell:
#   Enable-WindowsOptionalFeature -Online -FeatureName Client-EmbeddedShellLauncher
#   & "$env:ProgramFiles\Avatar Kiosk\resources\autostart\shell-launcher.ps1" -KioskUser "KIOSK\kiosk"
param(
  [Parameter(Mandatory = $true)][string]$KioskUser,
  [string]$Shell = "$env:ProgramFiles\Avatar Kiosk\Avatar Kiosk.exe"
)
$ErrorActionPreference = 'Stop'

# Shell Launcher's exit actions (WESL_UserSetting): 0 restart the shell, 1 restart the device,
# 2 shut down the device, 3 do nothing.
$RestartShell = 0
$DoNothing = 3

$sid = (New-Object System.Security.Principal.NTAccount($KioskUser)).Translate([System.Security.Principal.SecurityIdentifier]).Value
$launcher = [wmiclass]'\\localhost\root\standardcimv2\embedded:WESL_UserSetting'
# Every other account keeps Explorer.
$launcher.SetDefaultShell('explorer.exe', $RestartShell) | Out-Null
# Exit code 0: the kiosk was exited on purpose (or has relaunched itself): leave it. Anything else: restart it.
$launcher.SetCustomShell($sid, $Shell, ([int[]]@(0)), ([int[]]@($DoNothing)), $RestartShell) | Out-Null
$launcher.SetEnabled($true) | Out-Null
Write-Output "Shell Launcher: $Shell is the shell of $KioskUser ($sid)."
